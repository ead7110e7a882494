import { basename, extname } from "node:path";

/** A plan's name when it gives none: its file's name without the extension ("" for text without a file). */
export function faultPlanNameOf(file: string): string {
  return file.startsWith("<") ? "" : basename(file, extname(file));
}
