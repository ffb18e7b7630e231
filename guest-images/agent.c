/* TEMPORARY placeholder: the guest agent lands with the fleet work. */
#include "hbproto.h"
int main(void) { return 0; }
