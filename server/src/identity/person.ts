/**
 * A person a directory or identity provider vouched for, as every protocol adapter answers it and the identity
 * module's rules read it (modules/identity re-exports it as ExternalIdentity). `attributes`: every attribute or
 * claim read, as lists.
 */
export type ExternalIdentity = {
  uid: string;
  username: string;
  name: string;
  email: string;
  photo: string;
  groups: string[];
  attributes: Record<string, string[]>;
};
