extension Migration {
    /// Devices registered without a user (before a login) that never got one expire (`countdown-api`'s
    /// `OwnerlessDeviceSweeper`). A device whose user was removed, or that a writer unlinked, keeps its row: it
    /// is marked `countdown_ever_owned` the moment `user_id` goes from a user to NULL (the trigger fires on that
    /// change only, including `ON DELETE SET NULL` of a deleted user). Devices that lost their user before this
    /// version count as never owned.
    ///
    /// The column has a constant default (no table rewrite); the partial index holds only ownerless,
    /// never-owned devices, so the sweep reads nothing else. It is built in the migration's transaction (writes to
    /// `devices` wait for it: one pass over the table).
    static let ownerlessDevices = Migration(version: 30, name: "ownerless devices expire", sql: #"""
    ALTER TABLE devices ADD COLUMN countdown_ever_owned boolean NOT NULL DEFAULT false;

    CREATE FUNCTION countdown_devices_unlinked() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.countdown_ever_owned := true;
        RETURN NEW;
    END
    $$;

    CREATE TRIGGER devices_unlinked BEFORE UPDATE OF user_id ON devices
        FOR EACH ROW WHEN (OLD.user_id IS NOT NULL AND NEW.user_id IS NULL)
        EXECUTE FUNCTION countdown_devices_unlinked();

    CREATE INDEX devices_never_owned ON devices (updated_at) WHERE user_id IS NULL AND NOT countdown_ever_owned;
    """#)
}
