/** What `evalctl serve` prints about where it listens: the bind address as given, and the URLs that reach it. */
import { networkInterfaces } from 'node:os';

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

const urlOf = (address: string, port: number): string => `http://${address.includes(':') ? `[${address}]` : address}:${port}`;

/**
 * The URLs a client can use: for a wildcard bind (0.0.0.0, ::) one per address of this
 * machine's interfaces (IPv4 only for 0.0.0.0), loopback first; otherwise the one address.
 */
export function reachableUrls(host: string, port: number): string[] {
  if (!WILDCARDS.has(host)) return [urlOf(host.replace(/^\[|\]$/g, ''), port)];
  const v4Only = host === '0.0.0.0';
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (v4Only && a.family !== 'IPv4') continue;
      if (a.family === 'IPv6' && a.scopeid) continue; // link-local: needs a zone to be usable
      out.push(urlOf(a.address, port));
    }
  }
  const loopback = (u: string): boolean => u.includes('//127.') || u.includes('//[::1]');
  return [...out.filter(loopback), ...out.filter((u) => !loopback(u))];
}

/** The line `evalctl serve` prints once listening. */
export function listeningLine(host: string, port: number, url: string): string {
  const where = `(dashboard at ${url}/, GraphQL at ${url}/graphql)`;
  if (!WILDCARDS.has(host)) return `evalctl serve: ${url}  ${where}`;
  return `evalctl serve: listening on ${urlOf(host.replace(/^\[|\]$/g, ''), port).slice('http://'.length)} (every interface), reachable at ${reachableUrls(host, port).join(', ')}  ${where}`;
}
