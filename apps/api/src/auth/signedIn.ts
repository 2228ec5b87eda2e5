/** Who sent a request: the session's user, and whether it is a guest. */
export interface SignedIn {
  userId: string;
  sessionId: string;
  isGuest: boolean;
}
