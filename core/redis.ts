import { Redis } from 'ioredis';
import type { Config } from './config';

export type { Redis };

/** A Redis connection when REDIS_URL is set; null otherwise. */
export function openRedis(config: Config): Redis | null {
  if (!config.redis.url) return null;
  return new Redis(config.redis.url, {
    lazyConnect: true,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    connectTimeout: 2000,
  });
}
