DROP INDEX "domains_user_idx";--> statement-breakpoint
CREATE INDEX "domains_user_kind_name_idx" ON "domains" USING btree ("user_id","kind","name");--> statement-breakpoint
CREATE INDEX "domains_user_kind_lower_name_idx" ON "domains" USING btree ("user_id","kind",lower("name"));--> statement-breakpoint
CREATE INDEX "domains_tag_idx" ON "domains" USING btree ("tag");