import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { isAwsEndpoint, resolveS3Config, StorageConfigError } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'tidemark-s3cfg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function coreSite(name: string, props: Record<string, string>): string {
  const body = Object.entries(props)
    .map(([k, v]) => `  <property>\n    <name>${k}</name>\n    <value>${v}</value>\n  </property>`)
    .join('\n');
  const file = join(dir, name);
  writeFileSync(
    file,
    `<?xml version="1.0"?>\n<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>\n<configuration>\n${body}\n</configuration>\n`,
  );
  return file;
}

const fullEnv = {
  AWS_ACCESS_KEY_ID: 'ENVKEYID0001',
  AWS_SECRET_ACCESS_KEY: 'env-secret-value',
  AWS_SESSION_TOKEN: 'env-token-value',
  AWS_REGION: 'eu-west-1',
  AWS_DEFAULT_REGION: 'eu-central-1',
  AWS_ENDPOINT_URL_S3: 'http://env-s3:9000',
  AWS_ENDPOINT_URL: 'http://env-generic:9000',
};

describe('resolveS3Config precedence', () => {
  it('uses the environment when nothing else is given', () => {
    const c = resolveS3Config({}, fullEnv);
    expect(c.endpoint).toBe('http://env-s3:9000');
    expect(c.region).toBe('eu-west-1');
    expect(c.credentials).toEqual({ accessKeyId: 'ENVKEYID0001', secretAccessKey: 'env-secret-value', sessionToken: 'env-token-value' });
    expect(c.forcePathStyle).toBe(true); // non-AWS endpoint
    expect(c.sources.credentials).toBe('env');
  });

  it('falls back from AWS_ENDPOINT_URL_S3 to AWS_ENDPOINT_URL and from AWS_REGION to AWS_DEFAULT_REGION', () => {
    const { AWS_ENDPOINT_URL_S3: _e, AWS_REGION: _r, ...env } = fullEnv;
    const c = resolveS3Config({}, env);
    expect(c.endpoint).toBe('http://env-generic:9000');
    expect(c.region).toBe('eu-central-1');
  });

  it('core-site.xml beats the environment', () => {
    const file = coreSite('site1.xml', {
      'fs.s3a.endpoint': 'http://site-host:7480',
      'fs.s3a.access.key': 'SITEKEYID0001',
      'fs.s3a.secret.key': 'site-secret-value',
      'fs.s3a.endpoint.region': 'ap-south-1',
      'fs.s3a.path.style.access': 'false',
    });
    const c = resolveS3Config({ coreSiteXml: file }, fullEnv);
    expect(c.endpoint).toBe('http://site-host:7480');
    expect(c.region).toBe('ap-south-1');
    expect(c.forcePathStyle).toBe(false); // told explicitly, despite the non-AWS endpoint
    // Credentials come as a unit: the env session token must not leak into the site credentials.
    expect(c.credentials).toEqual({ accessKeyId: 'SITEKEYID0001', secretAccessKey: 'site-secret-value' });
    expect(c.sources.credentials).toBe('core-site.xml');
  });

  it('finds core-site.xml through HADOOP_CONF_DIR', () => {
    const confDir = join(dir, 'conf');
    rmSync(confDir, { recursive: true, force: true });
    mkdirSync(confDir);
    writeFileSync(
      join(confDir, 'core-site.xml'),
      '<configuration><property><name>fs.s3a.endpoint</name><value>rgw.local:7480</value></property>' +
        '<property><name>fs.s3a.connection.ssl.enabled</name><value>false</value></property>' +
        '<property><name>fs.s3a.session.token</name><value>site-token</value></property>' +
        '<property><name>fs.s3a.access.key</name><value>HDKEY0000001</value></property>' +
        '<property><name>fs.s3a.secret.key</name><value>hd-secret</value></property></configuration>',
    );
    const c = resolveS3Config({}, { ...fullEnv, HADOOP_CONF_DIR: confDir });
    expect(c.endpoint).toBe('http://rgw.local:7480');
    expect(c.credentials?.sessionToken).toBe('site-token');
    expect(c.region).toBe('eu-west-1'); // not in the site file: env
  });

  it('explicit options beat core-site.xml and env', () => {
    const file = coreSite('site2.xml', {
      'fs.s3a.endpoint': 'http://site-host:7480',
      'fs.s3a.access.key': 'SITEKEYID0001',
      'fs.s3a.secret.key': 'site-secret-value',
      'fs.s3a.endpoint.region': 'ap-south-1',
    });
    const c = resolveS3Config(
      {
        coreSiteXml: file,
        endpoint: 'http://opt-host:1234/',
        region: 'us-west-2',
        accessKeyId: 'OPTKEYID0001',
        secretAccessKey: 'opt-secret',
      },
      fullEnv,
    );
    expect(c.endpoint).toBe('http://opt-host:1234');
    expect(c.region).toBe('us-west-2');
    expect(c.credentials).toEqual({ accessKeyId: 'OPTKEYID0001', secretAccessKey: 'opt-secret' });
    expect(c.forcePathStyle).toBe(true);
  });

  it('defaults: AWS endpoint, virtual-host style, us-east-1, SDK credential chain', () => {
    const c = resolveS3Config({}, {});
    expect(c.endpoint).toBeUndefined();
    expect(c.region).toBe('us-east-1');
    expect(c.forcePathStyle).toBe(false);
    expect(c.credentials).toBeUndefined();
    expect(c.conditionalWriteCheck).toBe('probe');
    expect(resolveS3Config({ endpoint: 'https://s3.eu-west-1.amazonaws.com' }, {}).forcePathStyle).toBe(false);
    expect(isAwsEndpoint('https://s3.amazonaws.com')).toBe(true);
    expect(isAwsEndpoint('http://127.0.0.1:7480')).toBe(false);
  });

  it('reads the conditional-check opt-out from options and env', () => {
    expect(resolveS3Config({}, { TIDEMARK_S3_SKIP_CONDITIONAL_CHECK: '1' }).conditionalWriteCheck).toBe('skip');
    expect(resolveS3Config({ conditionalWriteCheck: 'probe' }, { TIDEMARK_S3_SKIP_CONDITIONAL_CHECK: '1' }).conditionalWriteCheck).toBe(
      'probe',
    );
  });

  it('rejects incomplete credentials and bad values, naming the option but not the secret', () => {
    expect(() => resolveS3Config({ accessKeyId: 'ONLYKEY' }, {})).toThrow(/secretAccessKey/);
    let message = '';
    try {
      resolveS3Config({}, { AWS_SECRET_ACCESS_KEY: 'lonely-secret-123' });
    } catch (e) {
      expect(e).toBeInstanceOf(StorageConfigError);
      message = (e as Error).message;
    }
    expect(message).toMatch(/AWS_ACCESS_KEY_ID/);
    expect(message).not.toContain('lonely-secret-123');
    expect(() => resolveS3Config({ partSize: 1024 }, {})).toThrow(/partSize/);
    expect(() => resolveS3Config({ maxAttempts: 0 }, {})).toThrow(/maxAttempts/);
    expect(() => resolveS3Config({ coreSiteXml: join(dir, 'missing.xml') }, {})).toThrow(/missing\.xml/);
    const bad = coreSite('bad.xml', { 'fs.s3a.path.style.access': 'maybe' });
    expect(() => resolveS3Config({ coreSiteXml: bad }, {})).toThrow(/fs\.s3a\.path\.style\.access/);
  });
});

describe('S3Config secret masking', () => {
  const c = resolveS3Config(
    { endpoint: 'http://h:1', accessKeyId: 'AKIAEXAMPLEKEY', secretAccessKey: 'super-secret-value-42', sessionToken: 'token-value-77' },
    {},
  );
  const renderings = [c.describe(), String(c), `${c}`, JSON.stringify(c), inspect(c), inspect({ nested: c }, { depth: 5 })];

  it('never renders the secret key or session token', () => {
    for (const text of renderings) {
      expect(text).not.toContain('super-secret-value-42');
      expect(text).not.toContain('token-value-77');
      expect(text).not.toContain('AKIAEXAMPLEKEY');
    }
  });

  it('still shows the non-secret settings', () => {
    expect(c.describe()).toContain('http://h:1');
    expect(c.describe()).toContain('secretAccessKey=***');
    expect(c.credentials?.secretAccessKey).toBe('super-secret-value-42');
  });
});
