"""An OpenAI-compatible upstream in Python for modelstub record's tests: it answers the nth
POST with the nth answer of a JSON list given as argv[1] ({"status", "body", "type"}, or
{"reply_bytes": N} for a 200 completion whose text is N bytes, {"message": {...}} for a 200
completion with that assistant message, or {"stream_words": N} for a stream of N one-word
deltas), then 500. Prints its port."""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

answers = json.loads(sys.argv[1])


class Upstream(BaseHTTPRequestHandler):
    served = 0

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        n = Upstream.served
        Upstream.served += 1
        answer = answers[n] if n < len(answers) else {"status": 500, "body": "no more answers"}
        if "stream_words" in answer:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            events = []
            for i in range(answer["stream_words"]):
                delta = {"content": "ab "}
                events.append("data: " + json.dumps({"model": "py-model", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}) + "\n\n")
            events.append("data: " + json.dumps({"model": "py-model", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}) + "\n\n")
            events.append("data: [DONE]\n\n")
            self.wfile.write("".join(events).encode())
            return
        if "message" in answer:
            message = dict(answer["message"], role="assistant")
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            body = json.dumps({"model": "py-model", "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": {"prompt_tokens": 5, "completion_tokens": 3}})
            kind = "application/json"
            status = 200
        elif "reply_bytes" in answer:
            text = ("abcdefghij" * (answer["reply_bytes"] // 10 + 1))[: answer["reply_bytes"]]
            body = json.dumps({"model": "py-model", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 7}})
            kind = "application/json"
            status = 200
        else:
            body = answer["body"]
            kind = answer.get("type", "application/json")
            status = answer["status"]
        data = body.encode()
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", 0), Upstream)
print(server.server_address[1], flush=True)
server.serve_forever()
