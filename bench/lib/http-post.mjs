// httpPost: one POST on a fresh connection, for the http section's first look at modelstub's reply.
import http from "node:http";

/** One POST on a fresh connection: { status, body }. */
export function httpPost(address, urlPath, body, timeoutMs = 10_000) {
  const [host, port] = [address.slice(0, address.lastIndexOf(":")), Number(address.slice(address.lastIndexOf(":") + 1))];
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host,
        port,
        path: urlPath,
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" },
      },
      (res) => {
        const parts = [];
        res.on("data", (d) => parts.push(d));
        res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(parts).toString() }));
        res.on("error", reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`POST ${urlPath} on ${address} timed out`)));
    req.on("error", reject);
    req.end(body);
  });
}
