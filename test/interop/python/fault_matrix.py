"""The fault-plan proof's executor in Python (grpcio), for test/interop/faults.sh.

    fault_matrix.py -addr 127.0.0.1:PORT -out DIR PLAN.json...

For each plan file, in session NAME (the file's base name without .json): SetFaultPlan with the
file's text, the research workflow with the retry policy, then GetEpisode (bytes_only), written
to DIR/NAME.binpb; one transcript line per plan on stdout. It is test/faults/retrying-executor.ts
line for line: the same requests byte for byte, the same steps, the same retry policy (retry
UNAVAILABLE and DEADLINE_EXCEEDED up to 3 times, backoff 100/200/400 ms declared, not slept;
give up on any other code), so both record byte-identical episodes.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.environ.get("MODELSTUB_INTEROP_PYGEN", os.path.join(HERE, "..", ".build", "python", "gen"))
sys.path.insert(0, GEN)

import grpc  # noqa: E402

from modelstub.v1 import control_pb2, control_pb2_grpc  # noqa: E402
from modelstub.v1 import model_pb2, model_pb2_grpc  # noqa: E402

CALL_DEADLINE_S = 2.0
RETRIED_CODES = (14, 4)  # UNAVAILABLE, DEADLINE_EXCEEDED
MAX_RETRIES = 3
MODEL = "research-model"
SYSTEM = "You are a research agent. Use the tools, then answer."
QUESTION = "How should a client retry a model call?"
ANSWER_PROMPT = "Answer the question now."
TOOL_NAMES = ("search", "fetch", "grep", "count")
TOOL_RESULTS = {
    "search": "https://docs.example/faults",
    "fetch": "Retry on UNAVAILABLE.\nRetry on DEADLINE_EXCEEDED.\nGive up on INTERNAL.",
    "grep": "Retry on UNAVAILABLE.\nRetry on DEADLINE_EXCEEDED.",
    "count": "2",
}


def backoff_ms(retry):
    return 100 * 2 ** (retry - 1)


def tools():
    return [model_pb2.Tool(name=n, description=f"The {n} tool", parameters_json='{"type":"object"}') for n in TOOL_NAMES]


class GaveUp(Exception):
    def __init__(self, code, step, occurrence):
        super().__init__(f"gave up at {step} #{occurrence}: code {code}")
        self.code, self.step, self.occurrence = code, step, occurrence


def run_research(model, session):
    """The workflow; returns (outcome, attempts, tool_runs) as retrying-executor.ts does."""
    md = (("x-modelstub-session", session),)
    attempts, tool_runs, occurrences = [], [], {}
    conversation = [
        model_pb2.Message(role=model_pb2.ROLE_SYSTEM, content=SYSTEM),
        model_pb2.Message(role=model_pb2.ROLE_USER, content=QUESTION),
    ]

    def once(step, method):
        fields = dict(model=MODEL, messages=conversation, tools=tools(), step_id=step)
        if method == "generate":
            r = model.Generate(model_pb2.GenerateRequest(**fields), metadata=md, timeout=CALL_DEADLINE_S)
            return r.message.content, [(c.id, c.name, c.arguments) for c in r.message.tool_calls]
        content = ""
        for frame in model.GenerateStream(model_pb2.GenerateStreamRequest(**fields), metadata=md, timeout=CALL_DEADLINE_S):
            if frame.WhichOneof("frame") == "text_delta":
                content += frame.text_delta
        return content, []

    def call(step, method):
        occurrence = occurrences.get(step, 0) + 1
        occurrences[step] = occurrence
        attempt = 0
        while True:
            attempt += 1
            try:
                reply = once(step, method)
                attempts.append((step, occurrence, attempt, method, 0, None))
                return reply
            except grpc.RpcError as e:
                code = e.code().value[0]
                retry = code in RETRIED_CODES and attempt <= MAX_RETRIES
                attempts.append((step, occurrence, attempt, method, code, backoff_ms(attempt) if retry else None))
                if not retry:
                    raise GaveUp(code, step, occurrence)
                # The backoff is declared, not slept, as in retrying-executor.ts.

    try:
        plan, _ = call("plan", "stream")
        conversation.append(model_pb2.Message(role=model_pb2.ROLE_ASSISTANT, content=plan))
        for _round in range(8):
            content, calls = call("next", "generate")
            conversation.append(model_pb2.Message(
                role=model_pb2.ROLE_ASSISTANT, content=content,
                tool_calls=[model_pb2.ToolCall(id=i, name=n, arguments=a) for i, n, a in calls]))
            if not calls:
                break
            tool_id, name, arguments = calls[0]
            tool_runs.append(f"{name} {arguments}")
            conversation.append(model_pb2.Message(
                role=model_pb2.ROLE_TOOL, content=TOOL_RESULTS.get(name, f"no tool {name}"), tool_call_id=tool_id))
            act, _ = call("act", "stream")
            conversation.append(model_pb2.Message(role=model_pb2.ROLE_ASSISTANT, content=act))
        conversation.append(model_pb2.Message(role=model_pb2.ROLE_USER, content=ANSWER_PROMPT))
        answer, _ = call("answer", "stream")
        outcome = f"ok {answer}"
    except GaveUp as g:
        outcome = f"gave up at {g.step} #{g.occurrence} with code {g.code}"
    return outcome, attempts, tool_runs


def transcript(session, outcome, attempts, tool_runs):
    """One line per plan, the same in both executors (see test/interop/ts/fault-matrix.mjs)."""
    tries = " ".join(
        f"{s}#{o}.{a}={c}" + (f"+{b}ms" if b is not None else "") for s, o, a, _m, c, b in attempts
    )
    return f"{session}: {outcome} | tools {len(tool_runs)} | {tries}"


def main():
    p = argparse.ArgumentParser(description="modelstub fault matrix executor (Python)")
    p.add_argument("-addr", "--addr", required=True)
    p.add_argument("-out", "--out", required=True)
    p.add_argument("plans", nargs="+")
    a = p.parse_args()
    channel = grpc.insecure_channel(a.addr, options=[("grpc.enable_http_proxy", 0)])
    model = model_pb2_grpc.ModelServiceStub(channel)
    control = control_pb2_grpc.ControlServiceStub(channel)
    for path in a.plans:
        name = os.path.basename(path)
        session = name[: -len(".json")] if name.endswith(".json") else name
        with open(path, encoding="utf-8") as f:
            text = f.read()
        control.SetFaultPlan(control_pb2.SetFaultPlanRequest(session=session, plan=text, source_name=name), timeout=10)
        outcome, attempts, tool_runs = run_research(model, session)
        ep = control.GetEpisode(control_pb2.GetEpisodeRequest(session=session, bytes_only=True), timeout=10)
        with open(os.path.join(a.out, session + ".binpb"), "wb") as f:
            f.write(ep.episode_binpb)
        print(transcript(session, outcome, attempts, tool_runs), flush=True)
    channel.close()


if __name__ == "__main__":
    main()
