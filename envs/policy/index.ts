// The policy API: the interface, the uniform-random baseline, and the version-following provider.
export * from './policy.js';
export * from './errors.js';
export { UniformRandomPolicy, uniformReplyLogProb, spreadLogProb } from './random-policy.js';
export { createPolicyProvider, createRandomPolicyProvider, type PolicyProvider, type PolicyProviderOptions } from './provider.js';
