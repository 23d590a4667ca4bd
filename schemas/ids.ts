// The one id grammar: what the read API accepts in paths and queries (storage/query/params.ts), and so what
// ingest accepts in a step's ids (validateEvent). An id the read API would refuse must not get in: its
// run or episode could never be read back. Letters, digits and `. _ - : /`, starting with a letter or digit,
// 1 to 256 characters: generated ids (`run-7/g12/e3`, UUIDs) fit; quotes, spaces, backslashes, control and
// non-ASCII characters never reach SQL.
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,255}$/;
export const ID_DESCRIPTION = 'an id of 1 to 256 characters from A-Z a-z 0-9 . _ - : / starting with a letter or digit';
