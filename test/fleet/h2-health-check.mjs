// The bytes of deploy/haproxy/haproxy.cfg's active check, built from their parts: a whole
// cleartext HTTP/2 exchange asking grpc.health.v1.Health/Check about "" (the whole server).
// `node test/fleet/h2-health-check.mjs` prints the request and the expected reply as hex; the
// fleet test checks the config holds exactly these.

/** An HTTP/2 frame: 24-bit length, type, flags, 31-bit stream id, payload. */
function frame(type, flags, stream, payload) {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** HPACK "literal header field without indexing", name from the static table (4-bit prefix). */
function literalIndexedName(index, value) {
  const name = index < 15 ? [index] : [15, index - 15];
  return Buffer.from([...name, value.length, ...Buffer.from(value)]);
}

/** HPACK "literal header field without indexing", new name; lengths < 127, no Huffman. */
function literalNewName(name, value) {
  return Buffer.from([0, name.length, ...Buffer.from(name), value.length, ...Buffer.from(value)]);
}

const HEADERS = 1,
  DATA = 0,
  SETTINGS = 4;
const END_STREAM = 1,
  END_HEADERS = 4;

const headerBlock = Buffer.concat([
  Buffer.from([0x83, 0x86]), // :method POST, :scheme http (static table 3 and 6)
  literalIndexedName(4, "/grpc.health.v1.Health/Check"), // :path
  literalIndexedName(1, "modelstub"), // :authority: Node's HTTP/2 server refuses a request without one
  literalIndexedName(31, "application/grpc"), // content-type
  literalNewName("te", "trailers"),
]);

/** What HAProxy sends: preface, empty SETTINGS, HEADERS, DATA holding an empty HealthCheckRequest. */
export const checkRequest = Buffer.concat([
  Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
  frame(SETTINGS, 0, 0, Buffer.alloc(0)),
  frame(HEADERS, END_HEADERS, 1, headerBlock),
  frame(DATA, END_STREAM, 1, Buffer.alloc(5)), // gRPC message prefix: not compressed, length 0
]);

/** What it looks for in the answer: the gRPC message {status: SERVING} (field 1, varint 1). */
export const servingReply = Buffer.from([0, 0, 0, 0, 2, 0x08, 0x01]);

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`tcp-check send-binary ${checkRequest.toString("hex")}`);
  console.log(`tcp-check expect binary ${servingReply.toString("hex")}`);
}
