import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { OptionSpec } from "../../src/cli/options.js";
import { serveOptions } from "../../src/cli/serve-options.js";
import { maxDurationMs } from "../../src/script/parse-duration.js";
import { requestLimits } from "../../src/engine/request-limits.js";
import { embedLimits } from "../../src/shared/embed-limits.js";
import { maxStreamFrames, minCoalescedFrameChars } from "../../src/engine/plan-frames.js";
import * as scriptLimits from "../../src/script/script-limits.js";
import { maxTemplateOutputBytes } from "../../src/shared/template-too-large-error.js";
import { exportChunkBytes } from "../../src/grpc/control-service.js";
import { getEpisodeMaxBytes } from "../../src/grpc/get-episode-answer.js";
import { maxStatusDetailsWireBytes } from "../../src/grpc/fit-status-details.js";
import { maxUnwrittenBytes } from "../../src/grpc/model-service.js";
import { streamResetLimit } from "../../src/grpc/start-grpc-server.js";
import { maxJsonDepth, maxJsonValues } from "../../src/http/scan-json-body.js";
import { maxQuotedChars } from "../../src/shared/clip-text.js";
import { httpTimeouts } from "../../src/http/start-http-server.js";

/*
 * The "Limits" section of docs/operations.md claims to list every limit the server applies. These
 * checks keep it from falling behind the code: each limit constant is named in a row that gives
 * its value, and each `--max-*` option (and the other options that bound something) has a row
 * with its variable and default.
 */
const page = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
const section = /<!-- section:limits -->([\s\S]*?)<!-- \/section:limits -->/.exec(page)?.[1] ?? "";
const rows = section.split("\n").filter((line) => line.startsWith("|"));

/** The table rows that name `name` in backticks (alone, or as the start of a longer name in backticks). */
function rowsNaming(name: string): string[] {
  return rows.filter((row) => row.includes(`\`${name}\``) || row.includes(`\`${name} `));
}

/** A number as the docs write it: 524,288. */
const written = (n: number) => n.toLocaleString("en-US");

describe('docs/operations.md "Limits"', () => {
  it("is a section of its own, after the rest of Operations, listed in the page's contents", () => {
    expect(section).toContain("## Limits");
    expect(page.indexOf("<!-- section:limits -->")).toBeGreaterThan(page.indexOf("## Streams and slow readers"));
    expect(page.slice(page.indexOf("<!-- toc -->"), page.indexOf("<!-- /toc -->"))).toContain("[Limits](#limits)");
  });

  const constants: [string, number][] = [
    ...Object.entries(scriptLimits).filter((e): e is [string, number] => typeof e[1] === "number"),
    ...Object.entries(requestLimits).map(([k, v]): [string, number] => [`requestLimits.${k}`, v]),
    ["maxStreamFrames", maxStreamFrames],
    ["minCoalescedFrameChars", minCoalescedFrameChars],
    ["maxUnwrittenBytes", maxUnwrittenBytes],
    ["exportChunkBytes", exportChunkBytes],
    ["getEpisodeMaxBytes", getEpisodeMaxBytes],
    ["maxTemplateOutputBytes", maxTemplateOutputBytes],
    ["maxStatusDetailsWireBytes", maxStatusDetailsWireBytes],
    ["maxDurationMs", maxDurationMs],
    ["maxJsonDepth", maxJsonDepth],
    ["maxJsonValues", maxJsonValues],
    ["maxQuotedChars", maxQuotedChars],
    ...Object.entries(embedLimits).map(([k, v]): [string, number] => [`embedLimits.${k}`, v]),
  ];

  it("lists every limit in script-limits.ts and request-limits.ts", () => {
    // A constant added there is a limit this section must gain.
    expect(Object.keys(scriptLimits).length).toBeGreaterThanOrEqual(14);
    expect(constants.length).toBeGreaterThanOrEqual(20);
  });

  it.each(constants)("names %s in a row that gives its value, %d", (name, value) => {
    const named = rowsNaming(name);
    expect(named, `no row of the Limits section names \`${name}\``).not.toHaveLength(0);
    expect(
      named.some((row) => row.includes(written(value))),
      `the row naming \`${name}\` does not say ${written(value)}`,
    ).toBe(true);
  });

  it("gives the HTTP timeouts and the stream reset limit with their values", () => {
    for (const [key, ms] of Object.entries(httpTimeouts)) {
      expect(
        rowsNaming(`httpTimeouts.${key}`).some((row) => row.includes(`${ms / 1000} s`)),
        `httpTimeouts.${key}`,
      ).toBe(true);
    }
    const row = rowsNaming("streamResetLimit").join("\n");
    expect(row).toContain(`burst ${written(streamResetLimit.burst)}`);
    expect(row).toContain(`${written(streamResetLimit.perSecond)} a second`);
  });

  const specs: readonly OptionSpec[] = serveOptions;
  const bounding = specs.filter((o) => o.name.startsWith("max-") || o.name === "session-idle-timeout" || o.name === "grace");
  it.each(bounding.map((o) => [o.name, o] as const))("has a row for --%s with its variable and default", (name, option) => {
    const named = rowsNaming(`--${name}`);
    expect(named, `no row of the Limits section names \`--${name}\``).not.toHaveLength(0);
    expect(named.some((row) => row.includes(`\`${option.env}\``))).toBe(true);
    if (option.default !== undefined) {
      const d = option.default;
      const shown = /^\d+$/.test(d) ? written(Number(d)) : d.replace(/(\d)([a-z])/, "$1 $2");
      expect(
        named.some((row) => row.includes(shown)),
        `the row for --${name} does not give its default ${shown}`,
      ).toBe(true);
    }
  });

  it("has a max-* row for every max-* option there is", () => {
    expect(
      bounding
        .filter((o) => o.name.startsWith("max-"))
        .map((o) => o.name)
        .sort(),
    ).toEqual(["max-episode-bytes", "max-episode-calls", "max-message-bytes", "max-sessions"]);
  });
});
