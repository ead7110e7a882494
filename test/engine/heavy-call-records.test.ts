import { describe, expect, it } from "vitest";
import { createStub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { heavyRequestBytes } from "../../src/shared/heavy-turns.js";
import { userRequest } from "../support/requests.js";

/*
 * Issue 27: recording a call of MBs into its episode takes about a millisecond per MB. Sixty-four
 * stalled readers of a 960 KB echo, let go at once, all ended in one turn of the event loop and
 * held it 40 to 80 ms recording, and the bystander's calls waited (the fuzz step's isolation
 * check once read 81 ms against its 50 ms bound). Each such call now records on its own turn.
 */

const script = `
entries: [{ reply: "a long wait", latency: 60m, repeat: true }]
`;

describe("calls of MBs cut off together", () => {
  it("are recorded a turn of the event loop apart, with other work between them, and all of them are in the episode", async () => {
    const stub = createStub({ script: loadScriptText(script, "test.yaml") });
    const big = "word ".repeat(Math.ceil(heavyRequestBytes / 5));
    const cut = new AbortController();
    // Turns of the event loop, counted by a callback that runs once a turn (in its check phase).
    let turn = 0;
    let counting = true;
    const count = () => {
      turn++;
      if (counting) setImmediate(count);
    };
    const recordedIn: number[] = [];
    const calls = Array.from({ length: 4 }, (_, i) =>
      stub.call({
        session: "heavy",
        method: "stream",
        request: userRequest(`${big}${i}`),
        signal: cut.signal,
        onFrame: () => undefined,
        onLog: () => recordedIn.push(turn),
      }),
    );
    // Let the calls start and wait on their latency.
    await new Promise((r) => setImmediate(r));
    setImmediate(count);
    cut.abort("cancelled");
    await Promise.all(calls);
    counting = false;

    // Before, all four were recorded in the turn that cut them off.
    expect(recordedIn).toHaveLength(4);
    expect(new Set(recordedIn).size).toBe(4);
    expect(stub.episode("heavy").calls.map((c) => c.outcome)).toEqual(Array(4).fill(stub.episode("heavy").calls[0]!.outcome));
    expect(stub.episode("heavy").calls.map((c) => c.request?.messages[0]?.content.length)).toEqual([0, 1, 2, 3].map((i) => `${big}${i}`.length));
  });
});
