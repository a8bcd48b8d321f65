/**
 * A WebAssembly kernel from its embedded binary (base64, written by build.ts), instantiated synchronously at
 * module load: kernels are a few hundred bytes and import nothing.
 */
export function wasmKernel<Exports extends object>(base64: string): Exports & { memory: WebAssembly.Memory } {
  const module = new WebAssembly.Module(Buffer.from(base64, 'base64'));
  return new WebAssembly.Instance(module).exports as Exports & { memory: WebAssembly.Memory };
}
