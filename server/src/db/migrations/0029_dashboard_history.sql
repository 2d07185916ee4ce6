CREATE TABLE "metric_samples" (
	"at" timestamp with time zone PRIMARY KEY NOT NULL,
	"running" jsonb NOT NULL,
	"starts" jsonb NOT NULL,
	"queued" integer NOT NULL,
	"hypervisors" jsonb NOT NULL
);
