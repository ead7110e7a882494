import { ServerCredentials } from "@grpc/grpc-js";
import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";

/** A TLS file that cannot be used; the message names the flag, the file and what is wrong. */
export class TlsFileError extends Error {}

/** OpenSSL's message without its `error:0480006C:` prefix: `PEM routines::no start line`. */
function opensslReason(err: unknown): string {
  return (err as Error).message.replace(/^error:[0-9A-F]+:/, "");
}

/** Reads a TLS file, or says which flag's file cannot be read. */
async function readTlsFile(flag: string, file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new TlsFileError(`--${flag} ${file}: cannot read it (${(err as Error).message})`);
  }
}

/** Checks that `pem` is a PEM certificate (chain); the message names the flag, the file and what is wrong. */
function checkCertificate(file: string, pem: Buffer): X509Certificate {
  const text = pem.toString("latin1");
  if (!text.includes("-----BEGIN CERTIFICATE-----")) {
    const hint = /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)
      ? "it holds a private key: are --tls-cert and --tls-key swapped?"
      : "no -----BEGIN CERTIFICATE----- line";
    throw new TlsFileError(`--tls-cert ${file}: not a PEM certificate (${hint})`);
  }
  try {
    return new X509Certificate(pem);
  } catch (err) {
    throw new TlsFileError(`--tls-cert ${file}: not a PEM certificate (${opensslReason(err)})`);
  }
}

/** Checks that `pem` is an unencrypted PEM private key; the message names the flag, the file and what is wrong. */
function checkPrivateKey(file: string, pem: Buffer): KeyObject {
  const text = pem.toString("latin1");
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    const hint = text.includes("-----BEGIN CERTIFICATE-----")
      ? "it holds a certificate: are --tls-cert and --tls-key swapped?"
      : "no -----BEGIN PRIVATE KEY----- line";
    throw new TlsFileError(`--tls-key ${file}: not a PEM private key (${hint})`);
  }
  try {
    return createPrivateKey(pem);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ERR_MISSING_PASSPHRASE") {
      throw new TlsFileError(`--tls-key ${file}: an encrypted private key; give it unencrypted (openssl pkey -in ${file} -out key.pem)`);
    }
    throw new TlsFileError(`--tls-key ${file}: not a PEM private key (${opensslReason(err)})`);
  }
}

/**
 * The TLS credentials of --tls-cert and --tls-key (undefined for neither: plaintext). Each file is read and checked on its own before
 * the credentials are built, so a bad one is named with what is wrong with it; grpc-js would only
 * say `PEM routines::no start line`, without saying which file.
 */
export async function tlsCredentials(cert: string | undefined, key: string | undefined): Promise<ServerCredentials | undefined> {
  if (!cert && !key) return undefined;
  if (!cert || !key) throw new TlsFileError("--tls-cert and --tls-key go together: give both, or neither for plaintext");
  const [certChain, privateKey] = await Promise.all([readTlsFile("tls-cert", cert), readTlsFile("tls-key", key)]);
  const certificate = checkCertificate(cert, certChain);
  const keyObject = checkPrivateKey(key, privateKey);
  if (!certificate.checkPrivateKey(keyObject)) {
    throw new TlsFileError(`--tls-key ${key}: not the private key of --tls-cert ${cert} (the certificate holds another public key)`);
  }
  try {
    return ServerCredentials.createSsl(null, [{ cert_chain: certChain, private_key: privateKey }], false);
  } catch (err) {
    throw new TlsFileError(`cannot use the TLS files --tls-cert ${cert} and --tls-key ${key}: ${(err as Error).message}`);
  }
}
