export declare const PROCESSORS_NODE_FLAGS: readonly string[];
export declare function nodeFlagsFor(args: readonly string[]): readonly string[];
export declare function missingNodeFlags(args: readonly string[], execArgv?: readonly string[], nodeOptions?: string): string[];
