import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetEpisodeRequestSchema, GetEpisodeResponseSchema } from "../../gen/modelstub/v1/control_pb.js";
import { EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

/*
 * GetEpisode writes its answer by hand from the episode's bytes (get-episode-answer.ts,
 * getEpisodeResponseBytes) instead of decoding the episode to have toBinary encode it back: that
 * held the loop about a second for a 64 MiB episode (issue 27, item 5). What goes on the wire must
 * be what toBinary of the full message writes.
 */

const pass = (b: Buffer) => b;

function rawGetEpisode(client: Client, session: string, bytesOnly: boolean): Promise<Buffer> {
  const request = Buffer.from(toBinary(GetEpisodeRequestSchema, create(GetEpisodeRequestSchema, { session, bytesOnly })));
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest("/modelstub.v1.ControlService/GetEpisode", pass, pass, request, new Metadata(), {}, (err: ServiceError | null, res?: Buffer) =>
      err ? reject(err) : resolve(res!),
    ),
  );
}

describe("GetEpisode's answer on the wire", () => {
  let s: StubServer;
  let client: Client;
  beforeAll(async () => {
    s = await startStubServer('entries:\n  - repeat: true\n    reply: "fine: {{last_user}}"\n', { clock: "virtual" });
    client = new Client(s.address, credentials.createInsecure());
    await s.control.call("SetFaultPlan", { session: "alice", plan: "name: calm\nrules: []\n" });
    for (const text of ["one", "twó", "three"]) await s.port.generate(userRequest(text), { session: "alice" });
  });
  afterAll(async () => {
    client.close();
    await s.close();
  });

  it.each([false, true])("is byte for byte what toBinary writes for the whole response (bytes_only %s)", async (bytesOnly) => {
    const wire = await rawGetEpisode(client, "alice", bytesOnly);
    const episodeBinpb = s.stub.episodeBytes("alice");
    const episode = fromBinary(EpisodeSchema, episodeBinpb);
    expect(episode.calls).toHaveLength(3);
    expect(episode.faultPlan?.name).toBe("calm");
    const expected = toBinary(GetEpisodeResponseSchema, create(GetEpisodeResponseSchema, bytesOnly ? { episodeBinpb } : { episode, episodeBinpb }));
    expect(wire.equals(Buffer.from(expected))).toBe(true);
  });

  it("decodes, through the control client, to the episode and its bytes", async () => {
    const r = await s.control.call("GetEpisode", { session: "alice" });
    expect(r.episode?.calls).toHaveLength(3);
    expect(Buffer.from(r.episodeBinpb).equals(Buffer.from(s.stub.episodeBytes("alice")))).toBe(true);
  });
});
