/**
 * The part of the WebAssembly JavaScript API the codecs use. Node.js has it all; TypeScript declares it only in
 * its DOM and web worker libraries, which this project does not load.
 */
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array);
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    readonly buffer: ArrayBuffer;
  }
}
