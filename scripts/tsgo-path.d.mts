/** The path of the native TypeScript 7 compiler's executable on this platform. */
export declare const tsgoPath: string;
