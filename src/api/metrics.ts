/** Prometheus' view of the server: `/metrics` behind a bearer token on the main server, or a server of its own on a loopback port. */
import http from 'node:http';
import type { Registry } from 'prom-client';
import { isSameSecret } from '../security/secrets.ts';

/** Whether an Authorization header carries `Bearer <token>`; compared in constant time (over digests, so lengths do not show). */
export function isMetricsRequestAllowed(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) return false;
  return isSameSecret(match[1], token);
}

/** Answers the registry's figures in Prometheus' text format. */
export async function answerMetrics(req: http.IncomingMessage, res: http.ServerResponse, registry: Registry): Promise<void> {
  try {
    const body = await registry.metrics();
    res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  } catch (error) {
    if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(`Collecting the metrics failed: ${(error as Error).message}`);
  }
}

/** The METRICS_PORT server: `GET /metrics` and nothing else, no token (it listens on a loopback or private interface). */
export function createMetricsServer(registry: Registry): http.Server {
  return http.createServer({ requestTimeout: 10_000, headersTimeout: 5_000 }, (req, res) => {
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Not found');
      return;
    }
    void answerMetrics(req, res, registry);
  });
}
