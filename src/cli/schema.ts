import { z } from "zod";
import { ScriptSchema } from "../script/script-schema.js";
import { resolveOptions, UsageError } from "./options.js";

/** The JSON Schema of the script format, derived from the zod schema (never written twice). */
export function scriptJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(ScriptSchema, { target: "draft-2020-12", io: "input" }),
    $id: "urn:modelstub:schema:script",
    title: "modelstub script",
  };
}

/** `modelstub schema`: prints the JSON Schema. */
export async function schema(argv: string[]): Promise<number> {
  let help;
  try {
    help = resolveOptions([{ name: "help", type: "boolean", description: "Print this help." }], argv).options["help"];
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`modelstub schema: ${err.message}\n`);
    return 2;
  }
  if (help) {
    process.stdout.write("usage: modelstub schema\n\nPrints the JSON Schema of the script format, for editors (see README).\n");
    return 0;
  }
  process.stdout.write(`${JSON.stringify(scriptJsonSchema(), null, 2)}\n`);
  return 0;
}
