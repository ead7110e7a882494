// Opens COUNT raw sockets to an HTTP front, sends each the same POST (BODY_FILE, JSON) and never
// reads an answer: stalled readers (attacks.ts). A process of its own, so that writing 64 bodies
// of 5.8 MB costs the test process (which runs the bystander's calls and measures them) nothing.
// Ends, closing every socket, on SIGTERM or when its standard input closes.
import { readFileSync } from "node:fs";
import { connect } from "node:net";

const [host, port, path, bodyFile, count] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const head = `POST ${path} HTTP/1.1\r\nhost: ${host}:${port}\r\ncontent-type: application/json\r\nx-modelstub-session: stalled\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`;
const sockets = [];
for (let i = 0; i < Number(count); i++) {
  const socket = connect(Number(port), host);
  socket.on("error", () => {});
  socket.write(head);
  socket.write(body);
  socket.pause();
  sockets.push(socket);
}
const end = () => {
  for (const s of sockets) s.destroy();
  process.exit(0);
};
process.on("SIGTERM", end);
process.stdin.on("end", end);
process.stdin.on("close", end);
process.stdin.resume();
