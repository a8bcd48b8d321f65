/** Moved beside the store and coordinator they serve; kept here for the suites under test/. */
export * from '../../core/testing/services.ts';
