// The console's texts for the people screens (locales/admin/).
import '../texts';
