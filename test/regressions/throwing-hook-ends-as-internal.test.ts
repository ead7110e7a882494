import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createStub, type Stub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { Code } from "../../src/index.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { collect, userRequest } from "../support/requests.js";

/*
 * runCall promised never to reject, but called its onCall/onLog hooks outside its try: a hook
 * that threw rejected the call, and the in-process port's generateStream then waited forever
 * for a result while the rejection went unhandled.
 */

let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeAll(() => {
  unhandled = [];
  process.on("unhandledRejection", onUnhandled);
});
afterAll(() => {
  process.off("unhandledRejection", onUnhandled);
});

const script = loadScriptText("entries:\n  - repeat: true\n    reply: fine\n", "t.yaml");

describe("a call whose onCall hook throws", () => {
  it("ends as INTERNAL naming the error, unary and streaming, and the episode records what the client saw", async () => {
    let broken = true;
    const stub = createStub({
      script,
      clock: createVirtualClock(),
      onCall: () => {
        if (broken) throw new Error("the log sink broke");
      },
    });
    const port = createInProcessPort(stub);
    await expect(port.generate(userRequest("x"))).rejects.toMatchObject({ code: Code.INTERNAL, details: "modelstub internal error: the log sink broke" });
    const { frames, error } = await collect(port.generateStream(userRequest("x")));
    expect(frames.map((f) => f.frame.case)).toEqual(["textDelta", "final"]);
    expect(error).toMatchObject({ code: Code.INTERNAL, details: "modelstub internal error: the log sink broke" });
    expect(stub.episode("default").calls.map((c) => [c.outcome, c.status?.code])).toEqual([
      [Outcome.ERROR, Code.INTERNAL],
      [Outcome.ERROR, Code.INTERNAL],
    ]);
    broken = false;
    expect((await port.generate(userRequest("x"))).message?.content).toBe("fine");
    await new Promise((r) => setImmediate(r));
    expect(unhandled).toEqual([]);
  });
});

describe("the in-process port over a stub whose call rejects", () => {
  const rejecting = { call: () => Promise.reject(new Error("engine exploded")) } as unknown as Stub;

  it("ends generateStream with INTERNAL instead of hanging", async () => {
    const { frames, error } = await collect(createInProcessPort(rejecting).generateStream(userRequest("x")));
    expect(frames).toEqual([]);
    expect(error).toMatchObject({ code: Code.INTERNAL, details: "modelstub internal error: engine exploded" });
  });

  it("ends generate with INTERNAL as a ModelCallError, not the raw error", async () => {
    await expect(createInProcessPort(rejecting).generate(userRequest("x"))).rejects.toMatchObject({ name: "ModelCallError", code: Code.INTERNAL });
    await new Promise((r) => setImmediate(r));
    expect(unhandled).toEqual([]);
  });
});
