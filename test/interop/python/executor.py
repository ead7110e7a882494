"""modelstub's Python interop client (grpcio + grpcio-tools stubs).

    executor.py -addr 127.0.0.1:PORT -session NAME -out FILE   runs the interop scenario
    executor.py -reencode IN -out OUT                          re-encodes Episode bytes

The stubs are generated at build time into test/interop/.build/python/gen (see ../build.sh);
set MODELSTUB_INTEROP_PYGEN to use another directory. The scenario is described in
test/interop/README.md; every executor runs it identically.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.environ.get("MODELSTUB_INTEROP_PYGEN", os.path.join(HERE, "..", ".build", "python", "gen"))
sys.path.insert(0, GEN)

import grpc  # noqa: E402

from modelstub.v1 import control_pb2, control_pb2_grpc  # noqa: E402
from modelstub.v1 import episode_pb2  # noqa: E402
from modelstub.v1 import model_pb2, model_pb2_grpc  # noqa: E402

MODEL = "interop-model"
SESSION_HEADER = "x-modelstub-session"
# Bounds every call but the "stuck" one, so a broken server cannot hang the suite.
SAFETY_DEADLINE_S = 20.0
STUCK_DEADLINE_S = 0.3
MAX_ATTEMPTS = 3
RETRY_AFTER_CAP_MS = 200


def fail(step, expected, got):
    """Prints what was expected and what came, then exits 1."""
    print(f"step {step} FAILED", flush=True)
    print(f"step {step}: expected {expected}", file=sys.stderr)
    print(f"step {step}: got      {got}", file=sys.stderr)
    sys.exit(1)


def quote(s):
    """Quotes a text the same way in every executor: backslash, quote, \\n, \\r, \\t escaped."""
    for a, b in (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t")):
        s = s.replace(a, b)
    return '"' + s + '"'


def describe(err):
    return f"{err.code().name}: {err.details()}"


def msg(role, content):
    return model_pb2.Message(role=role, content=content)


def tools():
    return [
        model_pb2.Tool(
            name="bash",
            description="Run a shell command",
            parameters_json='{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}',
        )
    ]


def sampling():
    # Both fields are proto3 `optional`: passing them sets their presence, even for 0.
    return model_pb2.SamplingParams(temperature=0.0, max_tokens=256)


def generate_request(messages, step_id):
    return model_pb2.GenerateRequest(
        model=MODEL, messages=messages, tools=tools(), sampling=sampling(), step_id=step_id
    )


def stream_request(messages, step_id):
    return model_pb2.GenerateStreamRequest(
        model=MODEL, messages=messages, tools=tools(), sampling=sampling(), step_id=step_id
    )


def reencode(src, dst):
    with open(src, "rb") as f:
        data = f.read()
    episode = episode_pb2.Episode()
    try:
        episode.ParseFromString(data)
    except Exception as e:  # DecodeError
        fail(0, "modelstub.v1.Episode bytes", e)
    with open(dst, "wb") as f:
        f.write(episode.SerializeToString(deterministic=True))


def scenario(addr, session, out):
    md = ((SESSION_HEADER, session),)
    # No proxy for a loopback test server, whatever the environment says.
    channel = grpc.insecure_channel(addr, options=[("grpc.enable_http_proxy", 0)])
    model = model_pb2_grpc.ModelServiceStub(channel)
    control = control_pb2_grpc.ControlServiceStub(channel)

    conversation = [
        msg(model_pb2.ROLE_SYSTEM, "You are a test agent."),
        msg(model_pb2.ROLE_USER, "List the files in /tmp"),
    ]

    # Step 1: a tool call.
    try:
        resp = model.Generate(generate_request(conversation, "plan"), metadata=md, timeout=SAFETY_DEADLINE_S)
    except grpc.RpcError as e:
        fail(1, "OK", describe(e))
    calls = resp.message.tool_calls
    if len(calls) == 0 or calls[0].name != "bash":
        fail(1, 'message.tool_calls[0] with name "bash"', resp)
    call = calls[0]
    print(f"step 1 ok: tool call {call.name} {call.arguments} id={call.id}", flush=True)

    # Step 2: the tool's result, then a text reply.
    conversation.append(
        model_pb2.Message(
            role=model_pb2.ROLE_ASSISTANT,
            content="",
            tool_calls=[model_pb2.ToolCall(id=call.id, name=call.name, arguments=call.arguments)],
        )
    )
    conversation.append(model_pb2.Message(role=model_pb2.ROLE_TOOL, content="a.txt\nb.txt", tool_call_id=call.id))
    try:
        resp = model.Generate(generate_request(conversation, "plan"), metadata=md, timeout=SAFETY_DEADLINE_S)
    except grpc.RpcError as e:
        fail(2, "OK", describe(e))
    if resp.message.content == "" or len(resp.message.tool_calls) != 0:
        fail(2, "a text reply with no tool calls", resp)
    text = resp.message.content
    print(f"step 2 ok: text {quote(text)}", flush=True)
    conversation.append(msg(model_pb2.ROLE_ASSISTANT, text))

    # Step 3: a streamed summary.
    conversation.append(msg(model_pb2.ROLE_USER, "Summarize"))
    parts = []
    final = None
    try:
        for frame in model.GenerateStream(
            stream_request(conversation, "summarize"), metadata=md, timeout=SAFETY_DEADLINE_S
        ):
            if final is not None:
                fail(3, "the final frame last", f"a frame after it: {frame}")
            kind = frame.WhichOneof("frame")
            if kind == "text_delta":
                parts.append(frame.text_delta)
            elif kind == "final":
                final = frame.final
            else:
                fail(3, "text_delta or final frames", frame)
    except grpc.RpcError as e:
        fail(3, "the stream to end OK", describe(e))
    if final is None:
        fail(3, "a final frame", "the stream ended without one")
    if not final.HasField("usage"):
        fail(3, "usage in the final frame", final)
    text = "".join(parts)
    if text == "":
        fail(3, "text deltas", "no text")
    u = final.usage
    finish = model_pb2.FinishReason.Name(final.finish_reason) if final.finish_reason in model_pb2.FinishReason.values() else str(final.finish_reason)
    print(
        f"step 3 ok: stream {len(parts)} text deltas {quote(text)} final {finish} "
        f"usage {u.input_tokens}/{u.output_tokens}/{u.total_tokens}",
        flush=True,
    )
    conversation.append(msg(model_pb2.ROLE_ASSISTANT, text))

    # Step 4: UNAVAILABLE twice, then success.
    attempt = 0
    while True:
        attempt += 1
        try:
            resp = model.Generate(generate_request(conversation, "flaky"), metadata=md, timeout=SAFETY_DEADLINE_S)
            break
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.UNAVAILABLE or attempt >= MAX_ATTEMPTS:
                fail(4, f"UNAVAILABLE then success on attempt {MAX_ATTEMPTS}", f"attempt {attempt}: {describe(e)}")
            for key, value in e.trailing_metadata() or ():
                if key == "retry-after-ms":
                    try:
                        ms = int(str(value).strip())
                    except ValueError:
                        ms = 0
                    if ms > 0:
                        time.sleep(min(ms, RETRY_AFTER_CAP_MS) / 1000.0)
                    break
    if attempt != MAX_ATTEMPTS:
        fail(4, f"success on attempt {MAX_ATTEMPTS}", f"success on attempt {attempt}")
    print(
        f"step 4 ok: attempt {attempt} succeeded after {attempt - 1} UNAVAILABLE, text {quote(resp.message.content)}",
        flush=True,
    )

    # Step 5: the caller's deadline cuts the call off.
    try:
        resp = model.Generate(generate_request(conversation, "stuck"), metadata=md, timeout=STUCK_DEADLINE_S)
        fail(5, "DEADLINE_EXCEEDED", f"OK {resp}")
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
            fail(5, "DEADLINE_EXCEEDED", describe(e))
    print("step 5 ok: DEADLINE_EXCEEDED", flush=True)

    # Step 6: the episode's bytes.
    try:
        ep = control.GetEpisode(
            control_pb2.GetEpisodeRequest(session=session), metadata=md, timeout=SAFETY_DEADLINE_S
        )
    except grpc.RpcError as e:
        fail(6, "OK", describe(e))
    if len(ep.episode_binpb) == 0:
        fail(6, "episode_binpb bytes", "none")
    with open(out, "wb") as f:
        f.write(ep.episode_binpb)
    print(
        f"step 6 ok: episode {len(ep.episode.calls)} calls, {len(ep.episode_binpb)} bytes written to {out}",
        flush=True,
    )
    channel.close()


def main():
    p = argparse.ArgumentParser(description="modelstub interop executor (Python)")
    p.add_argument("-addr", "--addr")
    p.add_argument("-session", "--session")
    p.add_argument("-out", "--out")
    p.add_argument("-reencode", "--reencode")
    a = p.parse_args()
    if a.reencode and a.out:
        reencode(a.reencode, a.out)
    elif a.addr and a.session and a.out:
        scenario(a.addr, a.session, a.out)
    else:
        p.print_usage(sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
