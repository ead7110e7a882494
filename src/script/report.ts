/**
 * Reports a semantic problem at a path of the script. `where.key` points at that key of the
 * mapping at `path` (`times` of an entry) rather than at the mapping; `where.needle` points at
 * that text inside the node (a `{{variable}}` inside a long reply).
 */
export type Report = (path: (string | number)[], message: string, hint?: string, where?: { key?: string; needle?: string }) => void;
