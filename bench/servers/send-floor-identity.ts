/** The one API key and agent the send floor (send-floor.ts) knows: its bench target sends with them. */
export const FLOOR_API_KEY = 'floor-key';
export const FLOOR_AGENT_ID = '00000000-0000-4000-8000-000000000001';
/** The NATS subject the floor's api nodes ask its workers on. */
export const FLOOR_SUBJECT = 'floor.send';
