import { readFileSync } from "node:fs";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest, startHttpStub, type HttpStub } from "./http-stub.js";

/** [gRPC code, HTTP status, error type, error code]: the table of docs/http.md, "Failures over HTTP". */
const table: [string, number, string, string][] = [
  ["CANCELLED", 499, "invalid_request_error", "cancelled"],
  ["UNKNOWN", 500, "server_error", "unknown"],
  ["INVALID_ARGUMENT", 400, "invalid_request_error", "invalid_argument"],
  ["DEADLINE_EXCEEDED", 408, "timeout", "timeout"],
  ["NOT_FOUND", 404, "invalid_request_error", "not_found"],
  ["ALREADY_EXISTS", 409, "invalid_request_error", "already_exists"],
  ["PERMISSION_DENIED", 403, "permission_error", "permission_denied"],
  ["RESOURCE_EXHAUSTED", 429, "requests", "rate_limit_exceeded"],
  ["FAILED_PRECONDITION", 400, "invalid_request_error", "failed_precondition"],
  ["ABORTED", 409, "invalid_request_error", "aborted"],
  ["OUT_OF_RANGE", 400, "invalid_request_error", "out_of_range"],
  ["UNIMPLEMENTED", 501, "server_error", "unimplemented"],
  ["INTERNAL", 500, "server_error", "internal_error"],
  ["UNAVAILABLE", 503, "server_error", "unavailable"],
  ["DATA_LOSS", 500, "server_error", "data_loss"],
  ["UNAUTHENTICATED", 401, "invalid_request_error", "invalid_api_key"],
];

const script = `
steps:
${table.map(([code]) => `  ${code}:\n    - error: { code: ${code}, message: "scripted ${code}" }`).join("\n")}
  no-retry:
    - error: { code: UNAVAILABLE, message: "down for good", trailers: { x-should-retry: "false", x-trace: "t-1" } }
    - reply: "never reached"
  exhausted:
    - reply: "the only one"
  echo:
    - repeat: true
      reply: "{{last_user}}"
`;

const body: OpenAI.ChatCompletionCreateParamsNonStreaming = { model: "m", messages: [{ role: "user", content: "go" }] };

/**
 * The rows of that table as docs/http.md writes them: a row may join codes with " / " (their
 * error codes likewise) and explain a code in parentheses.
 */
function documentedTable(): [string, number, string, string][] {
  const page = readFileSync(new URL("../../docs/http.md", import.meta.url), "utf8");
  const start = page.indexOf("| Script / engine code | HTTP | `type` | `code` |");
  const rows = page.slice(start).split("\n").slice(2);
  const out: [string, number, string, string][] = [];
  for (const row of rows) {
    if (!row.startsWith("|")) break;
    const [codes, status, type, errorCodes] = row
      .split("|")
      .slice(1, 5)
      .map((c) => c.trim());
    const names = codes!.replace(/\s*\(.*\)/, "").split(" / ");
    const errors = errorCodes!.split(" / ");
    names.forEach((name, i) => {
      out.push([name, Number(status), type!, errors[i] ?? errors[0]!]);
    });
  }
  return out;
}

describe("docs/http.md's status table", () => {
  it("is the mapping these tests check, row for row", () => {
    const byCode = (a: [string, ...unknown[]], b: [string, ...unknown[]]) => a[0].localeCompare(b[0]);
    expect(documentedTable().sort(byCode)).toEqual([...table].sort(byCode));
  });
});

describe("scripted failures over HTTP", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(script);
  });
  afterAll(() => h.close());

  it.each(table)("answers %s with HTTP %i and OpenAI's error body", async (code, status, type, errorCode) => {
    for (const stream of [false, true]) {
      const r = await rawRequest(
        h.base,
        "POST",
        "/v1/chat/completions",
        { ...body, stream },
        { "x-modelstub-session": `map-${stream}`, "x-modelstub-step": code },
      );
      expect(r.status).toBe(status);
      expect(JSON.parse(String(r.body))).toEqual({ error: { message: `scripted ${code}`, type, param: null, code: errorCode } });
    }
  });

  it("sends scripted trailers as headers, so x-should-retry: false stops the SDK's retries", async () => {
    const err = await h
      .client({ session: "no-retry", step: "no-retry", maxRetries: 3 })
      .chat.completions.create(body)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get("x-trace")).toBe("t-1");
    expect(h.stub.episode("no-retry").calls).toHaveLength(1);
  });

  it("answers an exhausted list with 400, which the SDK does not retry", async () => {
    const client = h.client({ session: "exhausted", step: "exhausted", maxRetries: 3 });
    await client.chat.completions.create(body);
    const err = await client.chat.completions.create(body).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain("ran out");
    expect(h.stub.episode("exhausted").calls).toHaveLength(2);
  });

  it("answers a reply that renders past 1 MiB with 429 and x-should-retry: false, which the SDK does not retry", async () => {
    const big: OpenAI.ChatCompletionCreateParamsNonStreaming = { model: "m", messages: [{ role: "user", content: "x".repeat(1_100_000) }] };
    const err = await h
      .client({ session: "too-large", step: "echo", maxRetries: 3 })
      .chat.completions.create(big)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get("x-should-retry")).toBe("false");
    expect(h.stub.episode("too-large").calls).toHaveLength(1);
  });
});
