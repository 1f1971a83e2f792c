// Roles, lowest to highest. A route that allows a role allows every role above it too.
export const ROLES = ['viewer', 'member', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export function roleAtLeast(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** Who a request is: a user with a token, a pipeline with an ingest key, or a client with an API key. */
export interface Caller {
  kind: 'user' | 'ingest_key' | 'api_key';
  /** User id, or the ingest or API key id. */
  id: string;
  /** What an API key may do (plugin monetization); absent for users. */
  scopes?: string[];
  tenantId: string;
  role: Role;
  email?: string;
  /** Token id and expiry (epoch seconds) of the token that authenticated the call. */
  jti?: string;
  exp?: number;
  /** Issue time (epoch seconds), so that a user-wide revocation can be applied later. */
  iat?: number;
}

/** public: anyone; authenticated: any caller; a role: that role or a higher one. */
export type Access = 'public' | 'authenticated' | Role;
