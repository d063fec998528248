extension Migration {
    /// Triggers that record every relevant change in the outbox, in the writer's transaction, and wake the
    /// relays with NOTIFY. Any writer (backend, API, admin, psql) gets the same behaviour.
    static let outboxTriggers = Migration(version: 3, name: "outbox triggers", sql: #"""
    CREATE FUNCTION countdown_outbox_write(p_topic text, p_stream text, p_user text, p_device text, p_rescheduled boolean)
    RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO countdown_outbox (topic, stream_id, user_id, device_id, rescheduled)
        VALUES (p_topic, p_stream, p_user, p_device, p_rescheduled);
        PERFORM pg_notify('countdown_outbox', '');
    END $$;

    CREATE FUNCTION countdown_streams_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            PERFORM countdown_outbox_write('stream', NEW.id, NULL, NULL, false);
        ELSIF NEW.planned_start_at IS DISTINCT FROM OLD.planned_start_at OR NEW.status IS DISTINCT FROM OLD.status THEN
            IF NEW.status = 'cancelled' AND OLD.status IS DISTINCT FROM 'cancelled' THEN
                UPDATE stream_reminders SET status = 'cancelled' WHERE stream_id = NEW.id AND status = 'active';
            END IF;
            PERFORM countdown_outbox_write('stream', NEW.id, NULL, NULL,
                NEW.planned_start_at IS DISTINCT FROM OLD.planned_start_at);
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER streams_outbox AFTER INSERT OR UPDATE ON streams
        FOR EACH ROW EXECUTE FUNCTION countdown_streams_changed();

    CREATE FUNCTION countdown_participants_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' OR NEW.user_id IS DISTINCT FROM OLD.user_id THEN
            PERFORM countdown_outbox_write('participant', NEW.stream_id, NEW.user_id, NULL, false);
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER stream_participants_outbox AFTER INSERT OR UPDATE ON stream_participants
        FOR EACH ROW EXECUTE FUNCTION countdown_participants_changed();

    -- A device matters when it gains a user or a (new, non-empty) token.
    CREATE FUNCTION countdown_devices_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.user_id IS NOT NULL AND (
            TG_OP = 'INSERT'
            OR NEW.user_id IS DISTINCT FROM OLD.user_id
            OR (coalesce(NEW.push_to_start_token, '') <> '' AND NEW.push_to_start_token IS DISTINCT FROM OLD.push_to_start_token)
            OR (coalesce(NEW.fcm_token, '') <> '' AND NEW.fcm_token IS DISTINCT FROM OLD.fcm_token)
            OR NEW.platform IS DISTINCT FROM OLD.platform) THEN
            PERFORM countdown_outbox_write('device', NULL, NEW.user_id, NEW.device_id, false);
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER devices_outbox AFTER INSERT OR UPDATE ON devices
        FOR EACH ROW EXECUTE FUNCTION countdown_devices_changed();

    -- live_stream turned (back) on.
    CREATE FUNCTION countdown_preferences_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            IF OLD.category = 'live_stream' AND NOT OLD.enabled THEN
                PERFORM countdown_outbox_write('user', NULL, OLD.user_id, NULL, false);
            END IF;
            RETURN NULL;
        END IF;
        IF NEW.category = 'live_stream' AND NEW.enabled AND (TG_OP = 'INSERT' OR NOT OLD.enabled) THEN
            PERFORM countdown_outbox_write('user', NULL, NEW.user_id, NULL, false);
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER notification_preferences_outbox AFTER INSERT OR UPDATE OR DELETE ON notification_preferences
        FOR EACH ROW EXECUTE FUNCTION countdown_preferences_changed();

    CREATE FUNCTION countdown_sessions_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' OR NEW.live_activity_token IS DISTINCT FROM OLD.live_activity_token THEN
            PERFORM countdown_outbox_write('session', NEW.stream_id, NEW.user_id, NEW.device_id, false);
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER live_activity_sessions_outbox AFTER INSERT OR UPDATE ON live_activity_sessions
        FOR EACH ROW EXECUTE FUNCTION countdown_sessions_changed();

    CREATE FUNCTION countdown_reminders_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.status = 'active' AND (TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM 'active') THEN
            PERFORM countdown_outbox_write('reminder', NEW.stream_id, NEW.user_id, NULL, false);
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER stream_reminders_outbox AFTER INSERT OR UPDATE ON stream_reminders
        FOR EACH ROW EXECUTE FUNCTION countdown_reminders_changed();
    """#)
}
