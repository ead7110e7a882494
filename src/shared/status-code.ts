/**
 * gRPC status codes, by number. The engine speaks them because every transport maps from them:
 * gRPC sends them as they are, the HTTP front maps them to HTTP statuses. Kept here so the
 * engine imports no transport library.
 */
export const Code = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

/** The name of a gRPC status code, like "UNAVAILABLE". */
export type CodeName = keyof typeof Code;

/** Every code name, in number order. */
export const codeNames = Object.keys(Code) as CodeName[];

/** The name of a code number, or `CODE_<n>` for a number outside the table. */
export function codeName(code: number): string {
  return codeNames[code] ?? `CODE_${code}`;
}
