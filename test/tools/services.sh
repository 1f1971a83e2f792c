#!/usr/bin/env bash
# Starts the local PostgreSQL and Redis the tests use, when they are not running.
set -u
# promtool (Debian package prometheus) checks the /metrics/ output in the tests.
if ! command -v promtool >/dev/null 2>&1; then
  echo "installing promtool (package prometheus)"
  (apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1 ||
    (apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1)) ||
    echo "could not install promtool; the /metrics/ test will fail" >&2
fi
# pebble (Debian package pebble): the ACME server the certificate tests get certificates from.
if ! command -v pebble >/dev/null 2>&1; then
  echo "installing pebble"
  (apt-get install -y --no-install-recommends pebble >/dev/null 2>&1 ||
    (apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends pebble >/dev/null 2>&1)) ||
    echo "could not install pebble; the ACME certificate test will fail" >&2
fi
# chromium (Debian package): the headless browser the console's tests drive (playwright-core).
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing chromium"
  (apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 ||
    (apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends chromium >/dev/null 2>&1)) ||
    echo "could not install chromium; the console's browser tests will fail" >&2
fi
# docker-compose (Debian package): checks docker-compose.yml when the docker compose plugin is absent.
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null 2>&1; then
  echo "installing docker-compose"
  (apt-get install -y --no-install-recommends docker-compose >/dev/null 2>&1 ||
    (apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends docker-compose >/dev/null 2>&1)) ||
    echo "could not install docker-compose; the compose file's test is skipped" >&2
fi
if ! (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then
  echo "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || echo "could not start PostgreSQL" >&2
fi
if ! (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
  echo "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" || echo "could not start Redis" >&2
fi
for i in $(seq 1 30); do
  (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null && exit 0
  sleep 1
done
echo "PostgreSQL or Redis is still not reachable" >&2
