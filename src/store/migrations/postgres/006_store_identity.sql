-- Which store this is, drawn once when the store is made. Pub/sub channel names carry it, so
-- deployments on different stores that share one Redis never wake each other.
CREATE TABLE store_identity (id TEXT NOT NULL);
INSERT INTO store_identity (id) VALUES (replace(gen_random_uuid()::text, '-', ''));
