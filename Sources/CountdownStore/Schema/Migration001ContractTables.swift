extension Migration {
    /// The tables the existing backend writes (SPEC section 4), tightened with checks and indexes.
    static let contractTables = Migration(version: 1, name: "contract tables", sql: #"""
    CREATE TABLE users (
        id           text PRIMARY KEY CHECK (id <> ''),
        display_name text NOT NULL,
        locale       text NOT NULL DEFAULT 'tr',
        created_at   timestamptz NOT NULL DEFAULT now(),
        updated_at   timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE notification_preferences (
        user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        category   text NOT NULL CHECK (category <> ''),
        enabled    boolean NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, category)
    );

    CREATE TABLE devices (
        device_id           text PRIMARY KEY CHECK (device_id <> ''),
        user_id             text NULL REFERENCES users (id) ON DELETE SET NULL,
        platform            text NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
        fcm_token           text NULL,
        push_to_start_token text NULL,
        timezone            text NULL,
        locale              text NULL,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX devices_by_user ON devices (user_id) WHERE user_id IS NOT NULL;

    CREATE TABLE streams (
        id               text PRIMARY KEY CHECK (id <> ''),
        title            text NOT NULL,
        planned_start_at timestamptz NOT NULL,
        status           text NOT NULL DEFAULT 'scheduled'
                         CHECK (status IN ('scheduled', 'ready', 'started', 'cancelled', 'expired')),
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX streams_by_status_and_start ON streams (status, planned_start_at);

    CREATE TABLE stream_participants (
        stream_id text NOT NULL REFERENCES streams (id) ON DELETE CASCADE,
        user_id   text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        role      text NOT NULL CHECK (role IN ('creator', 'guest')),
        position  integer NOT NULL DEFAULT 0,
        PRIMARY KEY (stream_id, user_id)
    );
    CREATE INDEX stream_participants_by_user ON stream_participants (user_id);

    CREATE TABLE live_activity_sessions (
        stream_id           text NOT NULL REFERENCES streams (id) ON DELETE CASCADE,
        device_id           text NOT NULL REFERENCES devices (device_id) ON DELETE CASCADE,
        user_id             text NULL REFERENCES users (id) ON DELETE SET NULL,
        live_activity_token text NOT NULL CHECK (live_activity_token <> ''),
        activity_id         text NULL,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (stream_id, device_id)
    );
    CREATE INDEX live_activity_sessions_by_device ON live_activity_sessions (device_id);

    CREATE TABLE stream_reminders (
        stream_id  text NOT NULL REFERENCES streams (id) ON DELETE CASCADE,
        user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        status     text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'sent', 'cancelled')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (stream_id, user_id)
    );
    CREATE INDEX stream_reminders_by_stream_and_status ON stream_reminders (stream_id, status);

    CREATE FUNCTION countdown_touch_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.updated_at IS NOT DISTINCT FROM OLD.updated_at THEN
            NEW.updated_at := now();
        END IF;
        RETURN NEW;
    END $$;
    CREATE TRIGGER users_touch BEFORE UPDATE ON users FOR EACH ROW EXECUTE FUNCTION countdown_touch_updated_at();
    CREATE TRIGGER notification_preferences_touch BEFORE UPDATE ON notification_preferences FOR EACH ROW EXECUTE FUNCTION countdown_touch_updated_at();
    CREATE TRIGGER devices_touch BEFORE UPDATE ON devices FOR EACH ROW EXECUTE FUNCTION countdown_touch_updated_at();
    CREATE TRIGGER streams_touch BEFORE UPDATE ON streams FOR EACH ROW EXECUTE FUNCTION countdown_touch_updated_at();
    CREATE TRIGGER live_activity_sessions_touch BEFORE UPDATE ON live_activity_sessions FOR EACH ROW EXECUTE FUNCTION countdown_touch_updated_at();
    CREATE TRIGGER stream_reminders_touch BEFORE UPDATE ON stream_reminders FOR EACH ROW EXECUTE FUNCTION countdown_touch_updated_at();
    """#)
}
