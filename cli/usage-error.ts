/** A command line the CLI cannot run as written; exits 2 with the usage text. */
export class UsageError extends Error {
  override name = 'UsageError';
}
