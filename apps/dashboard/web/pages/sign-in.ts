import { describeError } from '../lib/api.ts';
import { field, fill, h } from '../lib/dom.ts';
import { beginSignIn } from '../lib/oidc.ts';
import type { DashboardConfig } from '../lib/session.ts';

export interface SignInOptions {
  config: DashboardConfig;
  /** Why the person is here again (a session that ended), shown above the form. */
  notice: string | null;
  /** Checks a bearer with GET /auth/whoami and signs in with it; throws the api's refusal. */
  signIn(token: string): Promise<void>;
  /** Where to come back to after the provider's sign-in. */
  returnTo: string;
}

/**
 * Sign-in (docs/dashboard.md "Signing in"): through the identity provider when `[dashboard]
 * oidc_client_id` is set in mode oidc, and with a pasted API key (or access token) whenever the
 * api accepts one. A refusal is the api's own message, read out at once.
 */
export function renderSignIn(root: HTMLElement, options: SignInOptions): void {
  const { config } = options;
  const error = h('div', { class: 'form-error', role: 'alert' });
  const providerButton =
    config.oidc === null
      ? null
      : h(
          'button',
          { type: 'button', class: 'button primary wide' },
          `Sign in with ${new URL(config.oidc.issuer).host}`,
        );
  providerButton?.addEventListener('click', () => {
    providerButton.disabled = true;
    fill(error);
    beginSignIn(config.oidc!, options.returnTo).catch((e: unknown) => {
      providerButton.disabled = false;
      fill(error, `Could not start the sign-in: ${describeError(e)}`);
    });
  });

  const tokenLabel =
    config.auth_mode === 'oidc' ? (config.api_keys ? 'API key or access token' : 'Access token') : 'API key';
  const token = h('input', {
    type: 'password',
    name: 'token',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
  });
  const submit = h('button', { type: 'submit', class: 'button primary wide' }, 'Sign in');
  const form = h(
    'form',
    { class: 'stack' },
    field(
      tokenLabel,
      token,
      config.api_keys
        ? 'An API key starts with svc_sk_. Ask an admin for one (POST /auth/keys).'
        : 'An access token of the identity provider for this platform.',
    ),
    submit,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = token.value.trim();
    if (value === '') {
      fill(error, `Enter an ${tokenLabel}.`);
      token.focus();
      return;
    }
    submit.disabled = true;
    fill(error);
    options
      .signIn(value)
      .catch((e: unknown) => {
        fill(error, `Sign-in refused: ${describeError(e)}`);
        token.select();
        token.focus();
      })
      .finally(() => (submit.disabled = false));
  });

  fill(
    root,
    h(
      'div',
      { class: 'sign-in' },
      h('h1', { id: 'page-title', tabindex: -1 }, 'Sign in to Agent Platform'),
      options.notice === null ? null : h('p', { class: 'notice info', role: 'status' }, options.notice),
      error,
      providerButton,
      providerButton === null ? null : h('p', { class: 'or' }, 'or'),
      form,
      h(
        'p',
        { class: 'muted small' },
        `Platform ${config.version}. Your credential stays in this browser tab and is forgotten when you close it or sign out.`,
      ),
    ),
  );
  (config.oidc === null ? token : providerButton)?.focus();
}
