import argon2 from 'argon2';

// OWASP's argon2id floor: 19 MiB of memory, 2 iterations, parallelism 1.
const OPTIONS = { type: argon2.argon2id, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

// A hash of a password nobody has, verified when an e-mail is unknown so that a wrong
// e-mail takes as long as a wrong password.
let dummy: Promise<string> | undefined;
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword('no-such-user-timing-equaliser');
  return dummy;
}

/**
 * The password rule: 10 to 128 characters, with at least one letter and at least one
 * digit or symbol. Length does most of the work; the mix refuses "aaaaaaaaaa"-style words.
 */
export const PASSWORD_RULE = '10 to 128 characters, with at least one letter and at least one digit or symbol';

export function passwordProblem(password: string): string | null {
  if (password.length < 10 || password.length > 128) return `Password must be ${PASSWORD_RULE}`;
  if (!/\p{L}/u.test(password) || !/[^\p{L}]/u.test(password)) return `Password must be ${PASSWORD_RULE}`;
  return null;
}
