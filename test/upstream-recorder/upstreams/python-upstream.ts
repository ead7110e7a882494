import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** One answer of the Python upstream: an error status with its body, a 200 completion of `reply_bytes` bytes of text or with an assistant `message`, or a stream of `stream_words` deltas. */
export type PythonAnswer =
  | { status: number; body: string; type?: string }
  | { reply_bytes: number }
  | { stream_words: number }
  | { message: { content: string | null; tool_calls?: unknown[] } };

/**
 * Starts statuses.py, an OpenAI-compatible upstream written in Python (http.server, no
 * packages), answering the nth request with the nth answer; resolves to its base URL and a
 * close() that ends the process.
 */
export async function startPythonUpstream(answers: PythonAnswer[]): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const script = fileURLToPath(new URL("./statuses.py", import.meta.url));
  const child = spawn(process.env["PYTHON"] ?? "python3", [script, JSON.stringify(answers)], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<string>((resolve, reject) => {
    child.once("error", reject);
    void exited.then(() => reject(new Error("the Python upstream exited before it listened")));
    createInterface({ input: child.stdout! }).once("line", resolve);
  });
  return {
    baseUrl: `http://127.0.0.1:${port.trim()}/v1`,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
