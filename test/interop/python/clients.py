"""The client matrix (issue 32, item 4; run by ../dialects.sh): Python clients on their default paths.

Longer than 250 lines because it is one table of clients, each a short loop of its own, sharing
the server, episode and route checks: split, every file would repeat them.

Each client, set up with only its base URL and API key (no session or step header, no retries
turned off, nothing else), runs one tool loop unary and one streamed against its own fresh
`modelstub serve --http` serving ../clients.yaml on the virtual clock: the model asks for
get_weather, the client (or its framework) runs it and sends the result back, the model answers
with text quoting it. Checked for each client:

- the tool call the client parsed (name and arguments), the tool run once per loop, the final text;
- the streamed loop gives what the unary one gave (first text, tool calls, final text);
- the episode of session "default" (fetched with `modelstub episode`): four calls, generate,
  generate, stream, stream, answered by ask, answer, ask, answer; each answer's request carries
  the assistant's tool call (its id the one the model sent) and the tool's result under that id;
- the server's log: every call on the route of the client's default path (google-genai's unary and
  streamed calls on two routes, generateContent and streamGenerateContent).

Prints one "ok   NAME" or "FAIL NAME: why" line per check; exits 1 on any failure.

    python clients.py -root REPOSITORY [-only NAME]
"""

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version

PROMPT = "What is the weather in Paris?"
FIRST_TEXT = "Let me check."
TOOL_RESULT = "18 degrees in Paris"
FINAL_TEXT = "The tool says: 18 degrees in Paris"
DESCRIPTION = "The weather in a city"
PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

failures = 0
runs = []  # the cities get_weather was run for, in the current loop


def check(name, cond, why=""):
    global failures
    if cond:
        print(f"ok   {name}", flush=True)
    else:
        failures += 1
        print(f"FAIL {name}: {why}", flush=True)


def get_weather(city: str) -> str:
    """The weather in a city"""
    runs.append(city)
    return f"18 degrees in {city}"


class Loop:
    """What a client showed of one tool loop: the first turn's text and tool calls, the last text."""

    def __init__(self, first_text, calls, final_text):
        self.first_text, self.calls, self.final_text = first_text, calls, final_text

    def seen(self):
        return (self.first_text, self.calls, self.final_text)


class Server:
    """`modelstub serve --http` on free loopback ports, its log in a file."""

    def __init__(self, root, script):
        self.root = root
        self.log = tempfile.NamedTemporaryFile("w+", prefix="modelstub-clients-", suffix=".log", delete=False)
        env = dict(os.environ, MODELSTUB_CLOCK="virtual")
        cmd = ["node", f"{root}/bin/modelstub.js", "serve", "--script", script, "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0", "--log-format", "json"]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.grpc = self.base = None
        for _ in range(1200):  # 60 s: a bound on a start on a loaded machine, not a timing the checks depend on
            for rec in self.records():
                if rec.get("msg") == "gRPC listening":
                    self.grpc = rec["address"]
                if rec.get("msg") == "HTTP listening":
                    self.base = rec["url"]
            if (self.grpc and self.base) or self.proc.poll() is not None:
                break
            time.sleep(0.05)
        if not (self.grpc and self.base):
            self.close()
            raise RuntimeError(f"the server did not start: {self.text()}")

    def text(self):
        with open(self.log.name) as f:
            return f.read()

    def records(self):
        out = []
        for line in self.text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    def routes(self):
        return [r["method"] for r in self.records() if r.get("msg") == "call"]

    def episode(self):
        cmd = ["node", f"{self.root}/bin/modelstub.js", "episode", "--addr", self.grpc, "--session", "default"]
        return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=60).stdout)

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.unlink(self.log.name)


# ---- the clients, each one loop: loop(base, streamed) -> Loop ----


def openai_chat(base, streamed):
    import openai

    c = openai.OpenAI(base_url=f"{base}/v1", api_key="unused")
    tools = [{"type": "function", "function": {"name": "get_weather", "description": DESCRIPTION, "parameters": PARAMETERS}}]

    def ask(messages):
        if not streamed:
            return c.chat.completions.create(model="gpt-4o", messages=messages, tools=tools).choices[0].message
        with c.chat.completions.stream(model="gpt-4o", messages=messages, tools=tools) as s:
            for _ in s:
                pass
            return s.get_final_completion().choices[0].message

    messages = [{"role": "user", "content": PROMPT}]
    first = ask(messages)
    calls = [(t.function.name, json.loads(t.function.arguments)) for t in first.tool_calls or []]
    messages.append(
        {
            "role": "assistant",
            "content": first.content,
            "tool_calls": [{"id": t.id, "type": "function", "function": {"name": t.function.name, "arguments": t.function.arguments}} for t in first.tool_calls],
        }
    )
    for t in first.tool_calls:
        messages.append({"role": "tool", "tool_call_id": t.id, "content": get_weather(**json.loads(t.function.arguments))})
    return Loop(first.content, calls, ask(messages).content)


def openai_responses(base, streamed):
    import openai

    c = openai.OpenAI(base_url=f"{base}/v1", api_key="unused")
    tools = [{"type": "function", "name": "get_weather", "description": DESCRIPTION, "parameters": PARAMETERS}]

    def ask(items):
        if not streamed:
            return c.responses.create(model="gpt-4o", input=items, tools=tools)
        with c.responses.stream(model="gpt-4o", input=items, tools=tools) as s:
            for _ in s:
                pass
            return s.get_final_response()

    items = [{"role": "user", "content": PROMPT}]
    first = ask(items)
    fcs = [o for o in first.output if o.type == "function_call"]
    items += first.output  # the documented loop: the whole output back, then the results
    for fc in fcs:
        items.append({"type": "function_call_output", "call_id": fc.call_id, "output": get_weather(**json.loads(fc.arguments))})
    return Loop(first.output_text, [(fc.name, json.loads(fc.arguments)) for fc in fcs], ask(items).output_text)


def anthropic_messages(base, streamed):
    import anthropic

    c = anthropic.Anthropic(base_url=base, api_key="unused")
    tools = [{"name": "get_weather", "description": DESCRIPTION, "input_schema": PARAMETERS}]

    def ask(messages):
        if not streamed:
            return c.messages.create(model="claude-sonnet-4-5", max_tokens=1024, messages=messages, tools=tools)
        with c.messages.stream(model="claude-sonnet-4-5", max_tokens=1024, messages=messages, tools=tools) as s:
            for _ in s:
                pass
            return s.get_final_message()

    def text(m):
        return "".join(b.text for b in m.content if b.type == "text")

    messages = [{"role": "user", "content": PROMPT}]
    first = ask(messages)
    uses = [b for b in first.content if b.type == "tool_use"]
    messages.append({"role": "assistant", "content": first.content})
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": u.id, "content": get_weather(**u.input)} for u in uses]})
    return Loop(text(first), [(u.name, u.input) for u in uses], text(ask(messages)))


def langchain(chat_model):
    def loop(base, streamed):
        from langchain_core.messages import HumanMessage
        from langchain_core.tools import tool

        model = chat_model(base).bind_tools([tool(get_weather)])

        def ask(messages):
            if not streamed:
                return model.invoke(messages)
            whole = None
            for chunk in model.stream(messages):
                whole = chunk if whole is None else whole + chunk
            return whole

        messages = [HumanMessage(PROMPT)]
        first = ask(messages)
        messages.append(first)
        for call in first.tool_calls:
            messages.append(tool(get_weather).invoke(call))  # a ToolMessage under the call's id
        return Loop(str(first.text), [(t["name"], t["args"]) for t in first.tool_calls], str(ask(messages).text))

    return loop


def chat_openai(base):
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="gpt-4o", base_url=f"{base}/v1", api_key="unused")


def chat_openai_responses(base):
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="gpt-4o", base_url=f"{base}/v1", api_key="unused", use_responses_api=True)


def chat_anthropic(base):
    from langchain_anthropic import ChatAnthropic

    return ChatAnthropic(model="claude-sonnet-4-5", base_url=base, api_key="unused")


def openai_agents(base, streamed):
    from agents import Agent, ItemHelpers, Runner, function_tool, set_default_openai_client, set_tracing_disabled
    from agents.items import MessageOutputItem, ToolCallItem
    from openai import AsyncOpenAI

    set_tracing_disabled(True)  # its traces would go to OpenAI's servers
    set_default_openai_client(AsyncOpenAI(base_url=f"{base}/v1", api_key="unused"))
    agent = Agent(name="weather", instructions="You answer questions about the weather.", tools=[function_tool(get_weather)])

    async def run():
        if not streamed:
            return await Runner.run(agent, PROMPT)
        result = Runner.run_streamed(agent, PROMPT)
        async for _ in result.stream_events():
            pass
        return result

    result = asyncio.run(run())
    texts = [ItemHelpers.text_message_output(i) for i in result.new_items if isinstance(i, MessageOutputItem)]
    calls = [(i.raw_item.name, json.loads(i.raw_item.arguments)) for i in result.new_items if isinstance(i, ToolCallItem)]
    return Loop(texts[0] if len(texts) > 1 else None, calls, result.final_output)


def google_genai(base, streamed):
    from google import genai
    from google.genai import types

    c = genai.Client(api_key="unused", http_options=types.HttpOptions(base_url=base))
    # A function declaration, not a Python callable: automatic function calling (on by default)
    # calls only callables, so the SDK hands the call back and the loop runs the tool itself.
    tool = types.Tool(function_declarations=[types.FunctionDeclaration(name="get_weather", description=DESCRIPTION, parameters_json_schema=PARAMETERS)])
    config = types.GenerateContentConfig(tools=[tool])

    def ask(contents):
        """The model's turn as one Content: the unary response's, or the stream's chunks' parts joined."""
        if not streamed:
            return c.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config).candidates[0].content
        text, calls = "", []
        for chunk in c.models.generate_content_stream(model="gemini-2.5-flash", contents=contents, config=config):
            content = chunk.candidates[0].content if chunk.candidates else None
            for part in content.parts or [] if content else []:
                text += part.text or ""
                calls += [part] if part.function_call else []
        return types.Content(role="model", parts=([types.Part(text=text)] if text else []) + calls)

    def text(content):
        return "".join(p.text or "" for p in content.parts or [])

    contents = [types.Content(role="user", parts=[types.Part(text=PROMPT)])]
    first = ask(contents)
    fcs = [p.function_call for p in first.parts or [] if p.function_call]
    contents.append(first)
    contents.append(types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(id=fc.id, name=fc.name, response={"output": get_weather(**fc.args)})) for fc in fcs]))
    return Loop(text(first), [(fc.name, dict(fc.args)) for fc in fcs], text(ask(contents)))


CHAT, RESPONSES, MESSAGES = "POST /v1/chat/completions", "POST /v1/responses", "POST /v1/messages"
# google-genai 3.x calls Gemini API version v1 by default (modelstub serves v1beta too).
GEMINI = ("POST /v1/models/gemini-2.5-flash:generateContent", "POST /v1/models/gemini-2.5-flash:streamGenerateContent")

CLIENTS = [
    # name, distribution whose version is reported, the loop, the route of its default path
    # (or its unary and its streamed route)
    ("openai chat.completions", "openai", openai_chat, CHAT),
    ("openai responses", "openai", openai_responses, RESPONSES),
    ("anthropic messages", "anthropic", anthropic_messages, MESSAGES),
    ("langchain-openai ChatOpenAI", "langchain-openai", langchain(chat_openai), CHAT),
    ("langchain-openai ChatOpenAI use_responses_api", "langchain-openai", langchain(chat_openai_responses), RESPONSES),
    ("langchain-anthropic ChatAnthropic", "langchain-anthropic", langchain(chat_anthropic), MESSAGES),
    ("openai-agents Runner", "openai-agents", openai_agents, RESPONSES),
    ("google-genai models.generate_content", "google-genai", google_genai, GEMINI),
]


def check_episode(label, episode):
    calls = episode.get("calls", [])
    shape = [(c.get("method"), c.get("entry")) for c in calls]
    ask, answer = "entries[1]", "entries[0]"
    want = [("CALL_METHOD_GENERATE", ask), ("CALL_METHOD_GENERATE", answer), ("CALL_METHOD_GENERATE_STREAM", ask), ("CALL_METHOD_GENERATE_STREAM", answer)]
    check(f"{label}: episode: generate, generate, stream, stream answered by ask, answer, ask, answer", shape == want, repr(shape))
    if shape != want:
        return
    for i in (1, 3):
        sent = calls[i - 1]["response"]["message"]["tool_calls"]
        messages = calls[i]["request"]["messages"]
        assistant = [m for m in messages if m.get("role") == "ROLE_ASSISTANT"]
        tool = [m for m in messages if m.get("role") == "ROLE_TOOL"]
        got = (
            [[(t["id"], t["name"], json.loads(t["arguments"])) for t in m.get("tool_calls", [])] for m in assistant],
            [(m.get("tool_call_id"), m.get("content")) for m in tool],
            calls[i]["response"]["message"].get("content"),
        )
        expected = ([[(sent[0]["id"], "get_weather", {"city": "Paris"})]], [(sent[0]["id"], TOOL_RESULT)], FINAL_TEXT)
        check(f"{label}: episode: call {i + 1} sent back the tool call and its result under the model's id", got == expected, f"{got!r} != {expected!r}")


def run_client(root, script, name, dist, loop, route):
    label = f"{name} ({dist} {version(dist)})"
    server = Server(root, script)
    try:
        seen = {}
        for mode in ("unary", "streamed"):
            runs.clear()
            try:
                got = loop(server.base, mode == "streamed")
            except Exception as e:  # noqa: BLE001 - every failure is a FAIL line
                check(f"{label} {mode}: tool loop", False, f"{type(e).__name__}: {e}")
                continue
            seen[mode] = got
            check(f"{label} {mode}: tool call parsed get_weather {{'city': 'Paris'}}", got.calls == [("get_weather", {"city": "Paris"})], repr(got.calls))
            check(f"{label} {mode}: the tool ran once", runs == ["Paris"], repr(runs))
            check(f"{label} {mode}: final text", got.final_text == FINAL_TEXT, repr(got.final_text))
            check(f"{label} {mode}: first turn's text", got.first_text == FIRST_TEXT, repr(got.first_text))
        if len(seen) == 2:
            check(f"{label}: streamed loop = unary loop", seen["streamed"].seen() == seen["unary"].seen(), f"{seen['streamed'].seen()!r} != {seen['unary'].seen()!r}")
        check_episode(label, server.episode())
        unary, stream = route if isinstance(route, tuple) else (route, route)
        routes = server.routes()
        check(f"{label}: every call on {' / '.join(dict.fromkeys((unary, stream)))}", routes == [unary] * 2 + [stream] * 2, repr(routes))
    finally:
        server.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-root", required=True, help="the repository (its bin/modelstub.js, built)")
    p.add_argument("-only", default="", help="run only the clients whose name contains this")
    a = p.parse_args()
    script = os.path.join(a.root, "test/interop/clients.yaml")
    for name, dist, loop, route in CLIENTS:
        if a.only in name:
            try:
                run_client(a.root, script, name, dist, loop, route)
            except Exception as e:  # noqa: BLE001
                check(f"{name}: server and episode", False, f"{type(e).__name__}: {e}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
