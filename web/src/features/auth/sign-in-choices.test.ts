import { describe, expect, it } from 'vitest';
import { signInChoices } from './api';

describe('signInChoices', () => {
  it('shows the user/password form only while the server lists "form"', () => {
    expect(signInChoices(['form'])).toEqual({ form: true, external: [] });
    expect(signInChoices(['form', 'saml'])).toEqual({ form: true, external: ['saml'] });
    expect(signInChoices(['google'])).toEqual({ form: false, external: ['google'] });
    expect(signInChoices([])).toEqual({ form: false, external: [] });
  });

  it('shows the form until the list is known', () => {
    expect(signInChoices(undefined)).toEqual({ form: true, external: [] });
  });
});
