/**
 * Whether this run is CI (`CI=1|true|yes`), where a test's tool (sox, espeak-ng, PocketSphinx) must be installed:
 * a missing one fails the run there instead of skipping. Test helpers of every layer read it here, the lowest
 * layer, rather than through the product's configuration.
 */
export function requiredInCi(): boolean {
  const value = (process.env.CI ?? '').toLowerCase();
  return value === '1' || value === 'true' || value === 'yes';
}
