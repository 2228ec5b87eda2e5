/** The Node flags the built API runs with (nodeFlags.mjs). */
export declare const API_NODE_FLAGS: readonly string[];
