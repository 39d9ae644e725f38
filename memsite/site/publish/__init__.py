"""Memory published to other portals: the Backstage TechDocs source of ``memsite build
--techdocs`` (:mod:`.techdocs`), the trigger syntax of TechDocs' markdown extensions made text
(:mod:`.inert`) and the catalog entity that points Backstage at it (:mod:`.catalog`)."""
