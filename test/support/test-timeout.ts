/**
 * A test's (or a hook's) own timeout, never below the suite's: MODELSTUB_TEST_TIMEOUT_MS, which the
 * loaded CI step raises (see vitest.config.ts). A test that needs more than the default keeps its
 * figure on a quiet machine; on a loaded one every timeout rises alike. Either way it bounds a hang
 * only: no test asserts how long anything took.
 */
export function testTimeoutMs(ms: number): number {
  return Math.max(ms, Number(process.env.MODELSTUB_TEST_TIMEOUT_MS) || 0);
}
