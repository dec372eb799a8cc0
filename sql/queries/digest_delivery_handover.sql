-- Committed just before the message goes to the SMTP server, only while this run still holds the
-- claim (no row updated = the claim was taken over: do not send). Renews the lease for this row.
UPDATE deliveries
   SET handed_over_at = clock_timestamp(), email = %(email)s,
       claimed_until = now() + make_interval(secs => %(lease_s)s)
 WHERE digest_date = %(day)s AND subscriber_id = %(subscriber_id)s
   AND status = 'sending' AND claim_token = %(token)s
RETURNING subscriber_id
