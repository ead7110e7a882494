"""The official Anthropic Python SDK against modelstub's HTTP front (run by ../dialects.sh).

A tool loop unary and streaming, the streamed message reassembled equal to the unary one, and the
failures an agent meets: a 429 retried by the SDK, 529 overloaded_error, a 400 not retried, an
error event mid-stream. Prints one "ok NAME" or "FAIL NAME: why" line per check; exits 1 on any
failure.

    python anthropic_loop.py -base http://127.0.0.1:PORT
"""

import argparse
import sys

import anthropic

READ = {
    "name": "read",
    "description": "Reads a file.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}

failures = 0


def check(name, cond, why=""):
    global failures
    if cond:
        print(f"ok   {name}")
    else:
        failures += 1
        print(f"FAIL {name}: {why}")


def client(base, session, step="", max_retries=0):
    headers = {"x-modelstub-session": session}
    if step:
        headers["x-modelstub-step"] = step
    return anthropic.Anthropic(base_url=base, api_key="x", max_retries=max_retries, default_headers=headers)


def ask(messages):
    return {"model": "claude-stub", "max_tokens": 256, "tools": [READ], "messages": messages}


def loop(c, create):
    """One tool loop: the model calls read, the result goes back, the model answers with it."""
    first = create(c, ask([{"role": "user", "content": "tools please"}]))
    calls = [b for b in first.content if b.type == "tool_use"]
    second = create(
        c,
        ask(
            [
                {"role": "user", "content": "tools please"},
                {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": calls[0].id, "content": "127.0.0.1 localhost"}]},
            ]
        ),
    )
    return first, calls, second


def unary(c, params):
    return c.messages.create(**params)


def streamed(c, params):
    with c.messages.stream(**params) as s:
        for _ in s:
            pass
        return s.get_final_message()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-base", required=True)
    base = p.parse_args().base

    for name, create in (("unary", unary), ("streaming", streamed)):
        session = f"py-loop-{name}"
        try:
            first, calls, second = loop(client(base, session), create)
            check(f"{name} loop: tool_use", first.stop_reason == "tool_use" and [(b.id, b.name, b.input) for b in calls] == [(f"call-{session}-1-0", "read", {"path": "/etc/hosts"})], repr(first))
            check(f"{name} loop: answer from the tool_result", [b.text for b in second.content] == ["The file says: 127.0.0.1 localhost"] and second.stop_reason == "end_turn", repr(second))
            check(f"{name} loop: usage", (first.usage.input_tokens, first.usage.output_tokens) == (12, 9), repr(first.usage))
        except Exception as e:  # noqa: BLE001 - every failure is a FAIL line
            check(f"{name} loop", False, repr(e))

    # The same entry, unary and streamed, in sessions of the same length: equal but for the ids.
    u = client(base, "py-same-u").messages.create(**ask([{"role": "user", "content": "tools please"}]))
    s = streamed(client(base, "py-same-s"), ask([{"role": "user", "content": "tools please"}]))
    strip = lambda m: {k: v for k, v in m.model_dump(exclude={"id", "parsed_output"}).items()}  # noqa: E731
    us, ss = strip(u), strip(s)
    for b in us["content"] + ss["content"]:
        b.pop("id", None)
    check("stream reassembled = unary message", us == ss, f"{us} != {ss}")

    try:
        m = client(base, "py-retry", step="retry", max_retries=1).messages.create(**ask([{"role": "user", "content": "go"}]))
        check("429 retried by the SDK", [b.text for b in m.content] == ["worth the wait"], repr(m))
    except Exception as e:  # noqa: BLE001
        check("429 retried by the SDK", False, repr(e))

    try:
        client(base, "py-overloaded", step="overloaded").messages.create(**ask([{"role": "user", "content": "go"}]))
        check("529 overloaded_error", False, "no error")
    except anthropic.InternalServerError as e:
        check("529 overloaded_error", e.status_code == 529 and e.body == {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}, "request_id": "req_gen-py-overloaded-1"}, repr(e.body))
        check("error request id read by the SDK", e.request_id == "req_gen-py-overloaded-1", repr(e.request_id))

    try:
        client(base, "py-refused", step="refused", max_retries=2).messages.create(**ask([{"role": "user", "content": "go"}]))
        check("400 not retried", False, "no error")
    except anthropic.BadRequestError as e:
        check("400 not retried", e.body == {"type": "error", "error": {"type": "invalid_request_error", "message": "scripted refusal"}, "request_id": "req_gen-py-refused-1"}, repr(e.body))

    text = []
    try:
        with client(base, "py-broken", step="broken").messages.stream(**ask([{"role": "user", "content": "go"}])) as st:
            for t in st.text_stream:
                text.append(t)
        check("mid-stream error raised", False, "no error")
    except anthropic.APIStatusError as e:
        check("mid-stream error raised", "".join(text) == "one two " and e.body == {"type": "error", "error": {"type": "overloaded_error", "message": "the link broke"}, "request_id": "req_gen-py-broken-1"}, f"{text!r} {e.body!r}")

    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
