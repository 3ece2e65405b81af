import { describe, expect, it } from 'vitest';
import { sandboxCredentials } from '../sandbox/credentials.ts';
import { readsAsPlaceholder } from './secrets.ts';

describe('readsAsPlaceholder', () => {
  it('knows what templates and documentation put where a secret goes, whatever its case', () => {
    for (const value of [
      'REPLACE-ME',
      'replace-me-webhook-client-secret',
      'ReplaceMe',
      'changeme',
      'CHANGE_ME_123',
      'changeit',
      'example',
      'my-example-secret',
      'secret.example.com',
      'placeholder-value',
      'xxx',
      'XXXXXXXXXXXXXXXXXXXX',
      'xxxx-xxxx-xxxx',
      'your-secret-here',
      'YOUR_API_TOKEN',
      '<the secret the bank signs with>',
      '${WEBHOOK_CLIENT_SECRET}',
      '{{ webhook_secret }}',
      'TODO',
      'todo: ask the bank',
      'secret',
      'Password',
      'password123',
      'passw0rd',
      'test-1',
      '…',
      '...',
      '********',
    ]) {
      expect(readsAsPlaceholder(value), value).toBe(true);
    }
  });

  it('takes real-looking secrets, the sandbox’s own values among them (refused for another reason)', () => {
    for (const value of [
      '9f2c4b7e1a0d3c8b5e6f7a1b2c3d4e5f',
      'Zx3pQ9vK2mN8rT4wY6bH1jL5',
      'xxxA9f2c4b7e1a0d3c8b5e',
      'hook-secret-live-0001',
      'correct horse battery staple',
      'oauth-secret-1',
      'my-password-is-long-and-random-7Q',
      ...Object.values(sandboxCredentials),
    ]) {
      expect(readsAsPlaceholder(value), value).toBe(false);
    }
  });
});
