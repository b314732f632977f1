// SPDX-License-Identifier: GPL-2.0-only
#include "magnetctl.h"

int main(int argc, char **argv)
{
	return magnetctl_main(argc, argv);
}
