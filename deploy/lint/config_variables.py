"""The environment variables Countdown's processes read (SPEC section 3 and the API's), and the image's own."""

WORKER = {
    "DATABASE_URL", "REDIS_URL", "COUNTDOWN_NAMESPACE", "PUSH_TRANSPORT", "GOOGLE_APPLICATION_CREDENTIALS",
    "FCM_PROJECT_ID", "FCM_BASE_URL", "APNS_KEY_FILE", "APNS_KEY_ID", "APNS_TEAM_ID", "APNS_BUNDLE_ID",
    "APNS_ENVIRONMENT", "APNS_BASE_URL", "LIVE_ACTIVITY_ATTRIBUTES_TYPE", "DEEP_LINK_SCHEME", "START_LEAD_SECONDS",
    "REMINDER_LEAD_SECONDS", "EXPIRE_AFTER_SECONDS", "END_DISMISS_AFTER_SECONDS", "WORKER_CONCURRENCY",
    "PUSH_CONCURRENCY", "PUSH_RATE_LIMIT_PER_MINUTE", "HTTP_ADDR", "LOG_LEVEL", "LOG_FORMAT",
    "SHUTDOWN_GRACE_SECONDS", "RECONCILE_INTERVAL_SECONDS", "START_BATCH_SIZE", "JOB_LEASE_SECONDS", "JOB_MAX_ATTEMPTS",
    "DATABASE_POOL_SIZE", "MIGRATION_DATABASE_URL", "MIGRATION_LOCK_TIMEOUT_MS", "MIGRATION_LOCK_WAIT_SECONDS",
    "MIGRATION_CONNECT_WAIT_SECONDS", "FLEET_MAX_WORKERS", "FLEET_API_REPLICAS", "API_DATABASE_CONNECTIONS",
    "FLEET_WORKER_SURGE", "FLEET_API_SURGE", "FLEET_CONSOLE_REPLICAS", "FLEET_CONSOLE_SURGE", "FLEET_POOLER_MAX_CLIENTS",
    "REDIS_TLS_CA_FILE", "REDIS_TLS_CERT_FILE", "REDIS_TLS_KEY_FILE",
    "REDIS_TLS_SERVER_NAME", "REDIS_SENTINELS", "REDIS_SENTINEL_MASTER", "REDIS_SENTINEL_PASSWORD", "REDIS_STARTUP_WAIT_SECONDS",
    "RETENTION_DAYS", "AUDIT_RETENTION_DAYS", "RETENTION_BATCH_ROWS", "RETENTION_INTERVAL_SECONDS",
}
API = {"API_ADDR", "API_JWT_SECRET", "API_JWT_PUBLIC_KEY_FILE", "API_METRICS_ADDR", "API_JWT_KEYS", "API_JWT_ISSUER",
       "API_JWT_AUDIENCE", "API_JWT_MAX_LIFETIME_SECONDS", "API_REQUEST_TIMEOUT_SECONDS", "API_REQUEST_READ_TIMEOUT_SECONDS",
       "API_MAX_CONNECTIONS_PER_IP", "API_WRITES_PER_MINUTE_PER_USER", "API_WRITES_PER_MINUTE_PER_IP", "API_TRUSTED_PROXIES", "API_HTTP_THREADS",
       "API_DATABASE_CONNECTIONS", "DATABASE_STATEMENT_TIMEOUT_MS", "DATABASE_LOCK_TIMEOUT_MS",
       "API_MAX_CONNECTIONS", "API_ANONYMOUS_WRITES_PER_MINUTE", "API_OWNERLESS_DEVICE_TTL_HOURS"}
CONSOLE = {"CONSOLE_ADDR", "CONSOLE_METRICS_ADDR", "CONSOLE_AUTH", "CONSOLE_USER_HEADER", "CONSOLE_GROUPS_HEADER",
           "CONSOLE_TRUSTED_PROXIES", "CONSOLE_OPERATOR_GROUPS", "CONSOLE_CSRF_KEY", "CONSOLE_JWT_SECRET", "CONSOLE_JWT_PUBLIC_KEY_FILE",
           "CONSOLE_JWT_KEYS", "CONSOLE_JWT_ISSUER", "CONSOLE_JWT_AUDIENCE", "CONSOLE_JWT_MAX_LIFETIME_SECONDS"}
IMAGE = {"HEALTHCHECK_URL", "SWIFT_BACKTRACE"}
KNOWN = WORKER | API | CONSOLE | IMAGE

REQUIRED = {"countdown-worker": {"DATABASE_URL", "REDIS_URL"},
            "countdown-admin": {"DATABASE_URL"},
            "countdown-api": {"DATABASE_URL"},
            "countdown-console": {"DATABASE_URL", "REDIS_URL", "CONSOLE_AUTH"}}

PUSH_TRANSPORTS = {"fcm", "apns", "log"}
DEFAULT_SHUTDOWN_GRACE_SECONDS = 25
DEFAULT_HTTP_ADDR = "0.0.0.0:9090"
DEFAULT_API_ADDR = "0.0.0.0:8080"


def port_of(address):
    """The port of a `host:port` address, or None."""
    _, _, port = str(address).rpartition(":")
    return int(port) if port.isdigit() else None


def check_environment(env, program, where, report):
    """Names and the values that have a fixed form, for a process running `program`."""
    for name in sorted(env):
        if name not in KNOWN:
            report.error(where, f"{name} is not a Countdown configuration variable (SPEC section 3)")
    for name in sorted(REQUIRED.get(program, set()) - set(env)):
        report.error(where, f"{program} needs {name}")
    transport = env.get("PUSH_TRANSPORT")
    if transport is not None and transport not in PUSH_TRANSPORTS and "$" not in str(transport):
        report.error(where, f"PUSH_TRANSPORT={transport}, expected one of {sorted(PUSH_TRANSPORTS)}")
    for name in ("HTTP_ADDR", "API_ADDR", "API_METRICS_ADDR"):
        if name in env and port_of(env[name]) is None:
            report.error(where, f"{name}={env[name]} is not host:port")
    for name in ("SHUTDOWN_GRACE_SECONDS", "START_LEAD_SECONDS", "REMINDER_LEAD_SECONDS", "EXPIRE_AFTER_SECONDS",
                 "END_DISMISS_AFTER_SECONDS", "RECONCILE_INTERVAL_SECONDS"):
        if name in env and not str(env[name]).isdigit():
            report.error(where, f"{name}={env[name]} is not a whole number of seconds")
    lead = str(env.get("START_LEAD_SECONDS", ""))
    if lead.isdigit() and int(lead) > 25200:
        report.error(where, f"START_LEAD_SECONDS={lead} is more than 25200 (7 hours; an iOS Live Activity lives 8)")
