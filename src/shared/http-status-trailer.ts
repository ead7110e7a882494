/**
 * The trailer that carries an HTTP status a gRPC code cannot name back: `modelstub record`
 * writes it on an error whose upstream HTTP status the code's own mapping would not give back
 * (529, 502, 504, an unlisted 418), and the HTTP fronts answer with it in place of the code's
 * status. gRPC clients see it as one more trailer. A script may write it by hand too.
 */
export const httpStatusTrailer = "x-modelstub-http-status";

/** The HTTP error status a status's trailers ask for (400 to 599), or undefined. */
export function httpStatusOf(trailers: readonly (readonly [string, string])[]): number | undefined {
  const value = trailers.find(([k]) => k === httpStatusTrailer)?.[1];
  return value !== undefined && /^[45]\d\d$/.test(value) ? Number(value) : undefined;
}
